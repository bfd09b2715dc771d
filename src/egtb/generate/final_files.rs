//! The four files of an endgame (DTM, WDL, DTZ, DTZ50) written in their final form as the
//! values are put together, one king block of Nalimov's index after another, and the build's
//! summary taken beside them: for solvers that never hold a half whole (`bitmaps`,
//! `structures`).

use super::summary::{self, HalfSummary};
use super::{finish, GenError};
use crate::egtb::format::{Compression, FileSpec, Metric, TableWriter, TbValue, Wdl5};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::Material;
use rayon::prelude::*;
use std::path::Path;

pub struct FinalFiles<'a> {
    index: &'a EndgameIndex,
    files: [TableWriter; 4],
    open: Option<Half>,
    halves: [Option<HalfSummary>; 2],
    /// Per half, the deepest DTZ50 of each span of entries.
    spans: [Vec<u8>; 2],
    pushed: [u64; 2],
    results: Vec<TbValue>,
}

impl<'a> FinalFiles<'a> {
    /// The files of `m` in `out`, their entries as wide as the largest raw values of DTM, DTZ
    /// and DTZ50 (`max_raw`) need.
    pub fn create(
        out: &Path,
        m: &Material,
        index: &'a EndgameIndex,
        max_raw: [u16; 3],
    ) -> Result<FinalFiles<'a>, GenError> {
        let file = |metric: Metric, max_raw: u16| {
            TableWriter::create(
                out,
                &FileSpec {
                    material: *m,
                    metric,
                    halves: index.stored_halves(),
                    max_raw,
                    compression: Compression::Zstd,
                    unmark_broken: true,
                    delta: metric == Metric::Dtz50,
                    depths: metric != Metric::Wdl,
                },
            )
        };
        Ok(FinalFiles {
            index,
            files: [
                file(Metric::Dtm, max_raw[0])?,
                file(Metric::Wdl, Wdl5::Win.code())?,
                file(Metric::Dtz, max_raw[1])?,
                file(Metric::Dtz50, max_raw[2])?,
            ],
            open: None,
            halves: [None, None],
            spans: [Vec::new(), Vec::new()],
            pushed: [0; 2],
            results: Vec::new(),
        })
    }

    /// The values of the next block of half `h`, in index order (a half's blocks all come
    /// before the next half's).
    pub fn push(
        &mut self,
        h: Half,
        dtm: &[TbValue],
        dtz: &[TbValue],
        dtz50: &[TbValue],
    ) -> Result<(), GenError> {
        if self.open != Some(h) {
            if self.open.is_some() {
                for f in &mut self.files {
                    f.end_half()?;
                }
            }
            for f in &mut self.files {
                f.begin_half(h, self.index.size(h))?;
            }
            self.open = Some(h);
        }
        self.results.clear();
        self.results.par_extend(
            dtz.par_iter()
                .zip(dtz50)
                .map(|(&v, &v50)| finish::result_value(v, v50)),
        );
        // The files are compressed side by side, and the block summed up beside them, not one
        // after the other while the other threads wait for the next blocks.
        let [fm, fw, fz, f50] = &mut self.files;
        let results = &self.results;
        let (span_half, start) = (&mut self.spans[h as usize], self.pushed[h as usize]);
        let ((m, w), (z, (z50, block))) = rayon::join(
            || rayon::join(|| fm.push(dtm, None), || fw.push(results, None)),
            || {
                rayon::join(
                    || fz.push(dtz, None),
                    || {
                        rayon::join(
                            || f50.push(dtz50, Some(dtz)),
                            || {
                                finish::add_span_depths(span_half, start, dtz50);
                                summary::summarise_block(dtm, dtz, dtz50)
                            },
                        )
                    },
                )
            },
        );
        m?;
        w?;
        z?;
        z50?;
        let s = self.halves[h as usize].get_or_insert_with(HalfSummary::default);
        *s = std::mem::take(s).merge(block);
        self.pushed[h as usize] += dtz.len() as u64;
        Ok(())
    }

    /// Closes the files, with DTZ50's deepest values, and gives the summary of each half.
    pub fn finish(self) -> Result<[Option<HalfSummary>; 2], GenError> {
        let [dtm_file, wdl_file, dtz_file, mut dtz50_file] = self.files;
        let stored = self.index.stored_halves();
        let deepest50 = finish::deepest_by_side(stored, finish::deepest_of_spans(&self.spans));
        dtz50_file.record_max_depths(deepest50);
        for (h, s) in Half::BOTH.into_iter().zip(self.spans) {
            dtz50_file.record_depth_spans(h, s);
        }
        for mut f in [dtm_file, wdl_file, dtz_file, dtz50_file] {
            f.end_half()?;
            f.finish()?;
        }
        Ok(self.halves)
    }
}
