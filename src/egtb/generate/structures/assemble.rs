//! The files of an endgame solved by pawn structure, put together from its units' files one
//! king block of Nalimov's index at a time (`FinalFiles`): a block's entries all have one pair
//! of kings, so each unit gives it one run (`store`), and no half is ever held whole. The e.p.
//! zone, after the blocks, comes from the e.p. entries the units keep.

use super::store::{self, UnitReader, RUNS};
use super::{plan, Unit, METRICS};
use crate::chess::attacks::king_attacks;
use crate::chess::Square;
use crate::egtb::format::plies::CODE_NONE;
use crate::egtb::format::TbValue;
use crate::egtb::generate::final_files::FinalFiles;
use crate::egtb::generate::layout::Layout;
use crate::egtb::generate::solve::to_file_value;
use crate::egtb::generate::summary::HalfSummary;
use crate::egtb::generate::GenError;
use crate::egtb::index::{EndgameIndex, FrameCache, Half};
use rayon::prelude::*;
use std::io;
use std::ops::Range;
use std::path::Path;

/// One block's values, metric after metric.
struct Block {
    values: [Vec<TbValue>; 3],
}

/// Writes the four files of the endgame of `index` into `out` from the units in `work`, every
/// one of which must be solved (`solve_units`); gives the summary of each half.
pub fn write_files(
    out: &Path,
    index: &EndgameIndex,
    work: &Path,
) -> Result<[Option<HalfSummary>; 2], GenError> {
    let m = index.material();
    let io_err = |e: io::Error| GenError::Io(work.to_path_buf(), e);
    let units = plan(&m);
    let mut readers = Vec::with_capacity(units.len());
    let mut layouts = Vec::with_capacity(units.len());
    for (n, u) in units.iter().enumerate() {
        let key = store::key(&m, n, &u.variants);
        let r = UnitReader::open(&store::path(work, n), key)
            .map_err(io_err)?
            .ok_or_else(|| io_err(io::Error::other(format!("unit {n} not solved"))))?;
        readers.push(r);
        layouts.push(Layout::of_unit(index, Unit::new(u.variants.clone())));
    }
    let max_raw = [0, 1, 2].map(|k| {
        readers
            .iter()
            .map(|r| r.facts.max_raw[k])
            .max()
            .unwrap_or(0)
            .max(TbValue::DRAW.raw())
    });
    let mut files = FinalFiles::create(out, &m, index, max_raw)?;
    for &h in index.stored_halves() {
        // Each run of kings and the block Nalimov's index gives it, in the index's order.
        let mut blocks: Vec<(Range<u64>, usize)> = (0..RUNS)
            .filter_map(|k| {
                let (wk, bk) = layouts[0].run_kings(k);
                if wk == bk || king_attacks(wk).contains(bk) {
                    return None;
                }
                index.king_block(h, wk, bk).map(|b| (b, k))
            })
            .filter(|(b, _)| !b.is_empty())
            .collect();
        blocks.sort_by_key(|(b, _)| b.start);
        let (main, _) = index.zones(h);
        let threads = rayon::current_num_threads();
        let fill_batch = |batch: &[(Range<u64>, usize)]| -> Vec<io::Result<Block>> {
            batch
                .par_iter()
                .map(|(b, k)| fill(index, h, b.clone(), *k, &readers, &layouts))
                .collect()
        };
        let mut at = 0;
        let batches: Vec<&[(Range<u64>, usize)]> = blocks.chunks(threads).collect();
        let mut filled = batches.first().map(|b| fill_batch(b)).unwrap_or_default();
        for (i, batch) in batches.iter().enumerate() {
            // A batch is compressed and written while the next one is filled.
            let next = batches.get(i + 1);
            let (written, next_filled) = rayon::join(
                || -> Result<(), GenError> {
                    for (blk, (b, _)) in std::mem::take(&mut filled).into_iter().zip(*batch) {
                        assert_eq!(b.start, at, "Nalimov's king blocks follow each other");
                        let blk = blk.map_err(io_err)?;
                        files.push(h, &blk.values[0], &blk.values[1], &blk.values[2])?;
                        at = b.end;
                    }
                    Ok(())
                },
                || next.map(|b| fill_batch(b)).unwrap_or_default(),
            );
            written?;
            filled = next_filled;
        }
        let size = index.size(h);
        assert_eq!(at, main.min(size), "the king blocks cover the main zone");
        if size > at {
            let len = (size - at) as usize;
            let mut values = [0, 1, 2].map(|_| vec![TbValue::BROKEN; len]);
            for r in &readers {
                for e in r.ep().map_err(io_err)?.into_iter().filter(|e| e.half == h) {
                    for (k, v) in values.iter_mut().enumerate() {
                        v[(e.index - at) as usize] = to_file_value(METRICS[k], e.codes[k]);
                    }
                }
            }
            files.push(h, &values[0], &values[1], &values[2])?;
        }
    }
    files.finish()
}

/// The values of the Nalimov block `block` of half `h`, whose kings are those of run `k`.
fn fill(
    index: &EndgameIndex,
    h: Half,
    block: Range<u64>,
    k: usize,
    readers: &[UnitReader],
    layouts: &[Layout],
) -> io::Result<Block> {
    let len = (block.end - block.start) as usize;
    let mut values = [0, 1, 2].map(|_| vec![TbValue::BROKEN; len]);
    let mut runs: [Vec<u16>; 3] = Default::default();
    let mut frames = FrameCache::default();
    for (r, layout) in readers.iter().zip(layouts) {
        for (m, run) in runs.iter_mut().enumerate() {
            r.run(m, h, k, run)?;
        }
        let first = k as u64 * layout.run_len();
        let mut put = |j: usize, (nh, ni): (Half, u64)| {
            debug_assert_eq!(nh, h);
            let at = (ni - block.start) as usize;
            for (mm, v) in values.iter_mut().enumerate() {
                v[at] = to_file_value(METRICS[mm], runs[mm][j]);
            }
        };
        let Some(man) = layout.unit_last_man() else {
            for (j, &c) in runs[0].iter().enumerate() {
                if c == CODE_NONE {
                    continue;
                }
                let pos = layout.decode_valid(h, first + j as u64);
                if pos.ep.is_some() {
                    continue; // in the e.p. zone, after the blocks
                }
                let e = frames.index_own(index, &pos);
                put(j, e.expect("a valid entry has a Nalimov index"));
            }
            continue;
        };
        // A frame of the other men at a time, numbered for all of the last man's squares at
        // once: entry by entry, decoding and numbering took two thirds of writing KRPKR.
        debug_assert_eq!(runs[0].len() % 64, 0);
        for (f, frame) in runs[0].chunks_exact(64).enumerate() {
            let on = frame
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c != CODE_NONE)
                .fold(0u64, |b, (s, _)| b | 1 << s);
            if on == 0 {
                continue;
            }
            let j0 = f * 64;
            let s0 = on.trailing_zeros() as usize;
            let mut pos = layout.decode_valid(h, first + (j0 + s0) as u64);
            if pos.ep.is_some() {
                continue; // in the e.p. zone, after the blocks
            }
            pos.pieces[man.0.index()][man.1.index()].clear(Square(s0 as u8));
            frames.index_own_each(index, &pos, man, on, |s, e| {
                put(
                    j0 + s.index(),
                    e.expect("a valid entry has a Nalimov index"),
                )
            });
        }
    }
    Ok(Block { values })
}
