//! One endgame's generated tables opened together (DTM, DTZ, DTZ50 files of `egtb::file`, and
//! its WDL file where there is one), read by position or by index. The generator reads its sub-endgames through this; the prober
//! can too. Units: DTM in winner's moves (Nalimov); DTZ and DTZ50 in plies (Bourzutschky,
//! Tamplin, Haworth 2005, Sections 2-4), see `tables/README.md`.

use super::file::{
    file_name, Compression, FileSpec, Metric, TableError, TableFile, TableHeader, TableWriter,
    TbValue, Wdl5, FLAG_EQUALS_DTZ,
};
use super::index::{EndgameIndex, Half, TbPosition};
use super::material::Material;
use super::one_ply::{set_position, zeroing_values, Results};
use crate::chess::Position;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The most men of an endgame whose DTZ and DTZ50 are stored for one side to move
/// (`EndgameTables::keep_one_side`). Six-man tables keep both: their verification in rounds
/// and the paper's figures (`dtz_stats`) read both sides from the files.
pub const ONE_SIDE_MAX_MEN: u8 = 5;

/// The three files of one endgame and its index.
pub struct EndgameTables {
    material: Material,
    index: EndgameIndex,
    files: [TableFile; 3],
    /// The WDL file: written with the three by this version's generator, absent from older
    /// table directories (`result` then reads DTM and DTZ50).
    wdl: Option<TableFile>,
    /// The half of the index that DTZ and DTZ50 leave out, if they store one side only.
    zeroing_missing: Option<Half>,
}

impl EndgameTables {
    /// Opens and verifies (header and checksum) the three files of `material` in `dir`, and
    /// its WDL file if there is one (one present but damaged is refused as the others are).
    pub fn open(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let m = material.canonical().0;
        let open = |metric| TableFile::open_for(&dir.join(file_name(&m, metric)), &m, metric);
        let files = [open(Metric::Dtm)?, open(Metric::Dtz)?, open(Metric::Dtz50)?];
        let wdl = match dir.join(file_name(&m, Metric::Wdl)).try_exists() {
            Ok(true) => Some(open(Metric::Wdl)?),
            _ => None,
        };
        // DTZ and DTZ50 stored for one side need the two-sided results for the other's moves.
        let index = EndgameIndex::new(&m);
        let [_, dtz, dtz50] = &files;
        let zeroing_missing = index
            .stored_halves()
            .iter()
            .copied()
            .find(|&h| dtz.entries(h).is_none());
        if dtz.header().entries != dtz50.header().entries
            || (zeroing_missing.is_some() && wdl.is_none())
        {
            return Err(TableError::Corrupt {
                path: dtz50.path().to_path_buf(),
                what: "DTZ and DTZ50 store different halves, or one side without a WDL file".into(),
            });
        }
        Ok(EndgameTables {
            material: m,
            index,
            files,
            wdl,
            zeroing_missing,
        })
    }

    /// Opens the three files as `open` does, then holds them decompressed in memory.
    pub fn open_loaded(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let mut t = EndgameTables::open(dir, material)?;
        for f in t.files.iter_mut().chain(t.wdl.as_mut()) {
            f.load()?;
        }
        Ok(t)
    }

    pub fn material(&self) -> Material {
        self.material
    }

    pub fn index(&self) -> &EndgameIndex {
        &self.index
    }

    /// The file of a distance metric, or the WDL file (None if there is none).
    pub fn file(&self, metric: Metric) -> Option<&TableFile> {
        match metric {
            Metric::Wdl => self.wdl.as_ref(),
            m => Some(&self.files[m as usize - 1]),
        }
    }

    /// The header of one distance metric's file.
    pub fn header(&self, metric: Metric) -> &TableHeader {
        debug_assert!(
            metric != Metric::Wdl,
            "WDL has its own file, if any: `file`"
        );
        self.files[metric as usize - 1].header()
    }

    /// The result with the 50-move rule at an entry: one value of the WDL file, or DTM's and
    /// DTZ50's where there is none. None if out of range, the half is absent, or the entry is
    /// marked broken (a WDL file gives a broken entry a neighbour's result: the index tells
    /// broken entries).
    #[inline]
    pub fn result(&self, half: Half, idx: u64) -> Option<Wdl5> {
        match &self.wdl {
            Some(f) => Wdl5::from_code(f.value(half, idx)?.raw()),
            None => Wdl5::of(
                self.value(Metric::Dtm, half, idx)?,
                self.value(Metric::Dtz50, half, idx)?,
            ),
        }
    }

    /// The value of one distance metric at an entry (None if out of range or the half is
    /// absent). The value of a broken entry is the broken mark only where `marks_broken`.
    #[inline]
    pub fn value(&self, metric: Metric, half: Half, idx: u64) -> Option<TbValue> {
        debug_assert!(
            metric != Metric::Wdl,
            "a result is not a `TbValue`: `result`"
        );
        let file = &self.files[metric as usize - 1];
        if metric == Metric::Dtz50 && file.header().is_dtz_delta() {
            return file.value_over(&self.files[Metric::Dtz as usize - 1], half, idx);
        }
        file.value(half, idx)
    }

    /// Do broken entries read as broken in all three files? (Files of format 1 mark them;
    /// the generator now stores them as their neighbours, which compresses better.)
    pub fn marks_broken(&self) -> bool {
        self.files.iter().all(|f| f.header().marks_broken())
    }

    /// The entry of a position of this endgame (either colouring), None if not indexable.
    #[inline]
    pub fn entry(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        self.index.index(pos)
    }

    /// DTM, DTZ and DTZ50 at an entry (None if out of range or the half is absent: for DTZ and
    /// DTZ50 of a side they leave out, `values_by_one_ply`).
    #[inline]
    pub fn values(&self, half: Half, idx: u64) -> Option<[TbValue; 3]> {
        let [dtz, dtz50] = self.zeroing_pair(half, idx)?;
        Some([self.files[0].value(half, idx)?, dtz, dtz50])
    }

    /// DTZ and DTZ50 at an entry, as `values`.
    #[inline]
    pub fn zeroing_pair(&self, half: Half, idx: u64) -> Option<[TbValue; 2]> {
        let [_, dtz, dtz50] = &self.files;
        let dtz = dtz.value(half, idx)?;
        // A DTZ50 code of 0 is the DTZ value just read: no second lookup.
        let dtz50 = match dtz50.value(half, idx)? {
            code if !dtz50.header().is_dtz_delta() => code,
            code if code == TbValue::BROKEN => dtz,
            code => TbValue::from_raw(code.raw() - 1),
        };
        Some([dtz, dtz50])
    }

    /// The half of the index that DTZ and DTZ50 leave out, if they store one side only.
    #[inline]
    pub fn zeroing_missing(&self) -> Option<Half> {
        self.zeroing_missing
    }

    /// `values` at any entry of the index: DTZ and DTZ50 of a side the files leave out by one ply
    /// (`one_ply`), with `others` for the sub-endgames and `pos` as scratch. None also for a
    /// broken entry of that side.
    pub fn values_by_one_ply(
        &self,
        half: Half,
        idx: u64,
        others: &(impl Results + ?Sized),
        pos: &mut Position,
    ) -> Option<[TbValue; 3]> {
        if self.zeroing_missing() != Some(half) {
            return self.values(half, idx);
        }
        let dtm = self.files[0].value(half, idx)?;
        let tb = self.index.decode(half, idx)?;
        set_position(pos, &tb);
        let [dtz, dtz50] = zeroing_values(pos, &tb, self, others)?;
        Some([dtm, dtz, dtz50])
    }

    /// Are the DTZ and DTZ50 files the same values (same payload, by its checksum)? Then the
    /// 50-move rule changes no result in this endgame. False does not say it does.
    pub fn rule50_changes_nothing(&self) -> bool {
        let [_, dtz, dtz50] = &self.files;
        if dtz50.header().is_dtz_delta() {
            return dtz50.header().flags & FLAG_EQUALS_DTZ != 0;
        }
        let key = |f: &TableFile| {
            let h = f.header();
            (
                h.value_width,
                h.compression,
                h.entries,
                h.payload_len,
                h.payload_hash,
            )
        };
        key(dtz) == key(dtz50)
    }

    /// DTM, DTZ and DTZ50 of a position, from the side to move's point of view.
    pub fn probe(&self, pos: &TbPosition) -> Option<[TbValue; 3]> {
        let (half, idx) = self.entry(pos)?;
        self.values(half, idx)
    }
}

impl EndgameTables {
    /// Writes the WDL file of these tables into `dir` (atomically), the result of every entry
    /// from DTM and DTZ50 read block by block; returns its path.
    pub fn write_wdl(&self, dir: &Path) -> Result<PathBuf, TableError> {
        let halves = self.index.stored_halves();
        let mut w = TableWriter::create(
            dir,
            &FileSpec {
                material: self.material,
                metric: Metric::Wdl,
                halves,
                max_raw: Wdl5::Win.code(),
                compression: Compression::Zstd,
                unmark_broken: true,
                delta: false,
            },
        )?;
        // Chunks of whole blocks of every width, put together in parallel a group at a time.
        const CHUNK: u64 = 1 << 16;
        const GROUP: u64 = 64 * CHUNK;
        let corrupt = |what: String| TableError::Corrupt {
            path: self.files[0].path().to_path_buf(),
            what,
        };
        for &h in halves {
            let size = self.index.size(h);
            w.begin_half(h, size)?;
            for g in (0..size).step_by(GROUP as usize) {
                let chunks: Option<Vec<Vec<TbValue>>> = (g..(g + GROUP).min(size))
                    .step_by(CHUNK as usize)
                    .collect::<Vec<u64>>()
                    .into_par_iter()
                    .map(|c| self.results(h, c..(c + CHUNK).min(size)))
                    .collect();
                let chunks = chunks.ok_or_else(|| corrupt(format!("half {}", h.name())))?;
                for c in &chunks {
                    w.push(c, None)?;
                }
            }
            w.end_half()?;
        }
        w.finish()
    }

    /// Rewrites the DTZ and DTZ50 files of these tables in `dir` with one side to move: the
    /// half whose DTZ compresses smaller, as Syzygy chooses (the other is answered by one ply,
    /// `values_by_one_ply`). The WDL file must be there: the other side's moves read it.
    /// Returns the half kept, None where the index stores one half only (or DTZ does already).
    pub fn keep_one_side(&self, dir: &Path) -> Result<Option<Half>, TableError> {
        let dtz = &self.files[Metric::Dtz as usize - 1];
        let halves = self.index.stored_halves();
        if halves.len() < 2 || self.zeroing_missing().is_some() {
            return Ok(None);
        }
        if self.wdl.is_none() {
            return Err(TableError::BadInput(format!(
                "{}: one side's DTZ needs the WDL file",
                self.material
            )));
        }
        let keep = halves
            .iter()
            .copied()
            .min_by_key(|&h| (dtz.stored_bytes(h), h as u8))
            .expect("two halves");
        for metric in [Metric::Dtz50, Metric::Dtz] {
            super::file::keep_half(&dir.join(file_name(&self.material, metric)), keep)?;
        }
        Ok(Some(keep))
    }

    /// The results of entries `range` of `half` as WDL codes (broken: `TbValue::BROKEN`), from
    /// DTM and DTZ50.
    fn results(&self, half: Half, range: std::ops::Range<u64>) -> Option<Vec<TbValue>> {
        let [dtm_file, dtz_file, dtz50_file] = &self.files;
        let (mut dtm, mut dtz, mut dtz50) = (Vec::new(), Vec::new(), Vec::new());
        dtm_file.read_range(half, range.clone(), &mut dtm)?;
        dtz50_file.read_range(half, range.clone(), &mut dtz50)?;
        if dtz50_file.header().is_dtz_delta() {
            dtz_file.read_range(half, range, &mut dtz)?;
            for (v, d) in dtz50.iter_mut().zip(&dtz) {
                *v = match v.raw() {
                    0 => *d,
                    code => TbValue::from_raw(code - 1),
                };
            }
        }
        Some(
            dtm.iter()
                .zip(&dtz50)
                .map(|(&m, &z)| {
                    Wdl5::of(m, z).map_or(TbValue::BROKEN, |r| TbValue::from_raw(r.code()))
                })
                .collect(),
        )
    }
}

/// Are all three files of `material` present in `dir` and valid (header and checksum)?
pub fn tables_present(dir: &Path, material: &Material) -> bool {
    EndgameTables::open(dir, material).is_ok()
}
