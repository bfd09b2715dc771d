//! The end of a solve: what it resolved (`Resolved`: the depth log and which depths won or
//! lost), and the values of the metrics put together from the logs in Nalimov order, one king
//! block at a time (`assemble`), for the files' writer.

use super::*;

/// A finished solve: the depth at which every decided entry was resolved, and which are won,
/// on disk.
pub struct Resolved {
    pub(super) log: DepthReader,
    /// `kinds[d]`: `WON_KIND` if an entry was won at depth d, `LOST_KIND` if one was lost.
    pub(super) kinds: Vec<u8>,
    /// The quiet moves of every entry of the half counted before the first pass, where this
    /// solve counted one (`precount`).
    pub(super) quiet: Option<MoveCounts>,
    /// Per half: the log holds its entries with a capture to a position the opponent loses
    /// (`HalfBits::capture_wins`).
    pub(super) capture_wins: [bool; 2],
    /// Per half: how many entries it lost.
    pub(super) lost: [u64; 2],
}

pub(super) const WON_KIND: u8 = 1;

pub(super) const LOST_KIND: u8 = 2;

impl Resolved {
    /// The largest raw file value of `metric` an entry has, after `map` (a draw's if none is
    /// larger): it sets the width of the file's entries.
    pub fn max_raw(&self, metric: Metric, map: impl Fn(TbValue) -> TbValue) -> u16 {
        let mut max = TbValue::DRAW.raw();
        for (d, &k) in self.kinds.iter().enumerate() {
            let d = d as u16;
            for (kind, code) in [(WON_KIND, win(d)), (LOST_KIND, loss(d))] {
                if k & kind != 0 {
                    max = max.max(map(to_file_value(metric, code)).raw());
                }
            }
        }
        max
    }

    /// The deepest depth at which an entry was resolved (DTZ: the longest win in plies).
    pub fn deepest(&self) -> u16 {
        self.log.deepest()
    }
}

/// One metric's values to put together (`assemble`): those of `resolved`.
pub struct Assembly<'a> {
    pub resolved: &'a Resolved,
    pub metric: Metric,
}

/// Puts the values of every part together in Nalimov order (the halves the index stores), one
/// king block of the index at a time, and hands each block's values to `sink(half, values of
/// each part)`, block after block in index order: each valid entry's depth from its log, draws
/// for the rest, broken entries `TbValue::BROKEN`. A block's entries are those of one run of
/// the layout (the same kings; `Layout::king_runs`), so each block is put together from its
/// own few segments of the logs, its entries decoded and numbered in Nalimov's index once for
/// every metric, and no half is ever held whole (KRBKNN: 5.4 G entries a half). Blocks are put
/// together in parallel, as many at a time as there are threads.
pub fn assemble<E: Send>(
    layout: &Layout,
    parts: &[Assembly],
    io_err: impl Fn(io::Error) -> E + Sync,
    mut sink: impl FnMut(Half, &[&[TbValue]]) -> Result<(), E>,
) -> Result<(), E> {
    let index = layout.nalimov();
    // Each part's file value of every code its log can give, looked up once an entry.
    let file_values: Vec<Vec<u16>> = parts
        .iter()
        .map(|p| {
            (0..=loss(p.resolved.kinds.len() as u16))
                .map(|c| to_file_value(p.metric, c).raw())
                .collect()
        })
        .collect();
    let mut buffers = Vec::new();
    for _ in 0..rayon::current_num_threads() {
        buffers.push(BlockValues::new().map_err(&io_err)?);
    }
    for &h in index.stored_halves() {
        let blocks = index.king_blocks(h);
        let mut number = vec![[usize::MAX; 64]; 64];
        for (b, (ks, kn, _)) in blocks.iter().enumerate() {
            number[ks.index()][kn.index()] = b;
        }
        let mut runs = vec![Vec::new(); blocks.len()];
        for ((ks, kn), run) in layout.king_runs(h) {
            // Kings that Nalimov's index has no block for (adjacent ones) hold no valid entry.
            if let Some(&b) = number[ks as usize]
                .get(kn as usize)
                .filter(|&&b| b != usize::MAX)
            {
                runs[b].push(run);
            }
        }
        for first in (0..blocks.len()).step_by(buffers.len()) {
            let batch = first..(first + buffers.len()).min(blocks.len());
            let busy = &mut buffers[..batch.len()];
            busy.par_iter_mut()
                .zip(batch)
                .try_for_each(|(buf, b)| {
                    let block = blocks[b].2.clone();
                    buf.fill(layout, parts, &file_values, h, block, &runs[b])
                })
                .map_err(&io_err)?;
            for buf in busy.iter() {
                let len = buf.values.len() / parts.len();
                let values: Vec<&[TbValue]> = (0..parts.len())
                    .map(|p| &buf.values[p * len..(p + 1) * len])
                    .collect();
                sink(h, &values)?;
            }
        }
    }
    Ok(())
}

/// The file values (raw) of one segment of a log, and which (half, segment) they are, if any.
pub(super) type SegmentValues = (Option<(Half, u64)>, Vec<u16>);

/// One king block's values of every part (`assemble`), and what putting them together needs.
pub(super) struct BlockValues {
    /// Part p's values are the p-th of `parts` equal slices.
    pub(super) values: Vec<TbValue>,
    /// The raw file values of a run of the layout, part after part.
    pub(super) raw: Vec<u16>,
    /// Per part, the raw file values of the last log segment read, and which (half, segment) it
    /// was: a segment holds many king runs of a small endgame (KQKR: 256), and is read once for
    /// all.
    pub(super) segments: Vec<SegmentValues>,
    pub(super) scratch: LogScratch,
    pub(super) frames: FrameCache,
}

impl BlockValues {
    pub(super) fn new() -> io::Result<BlockValues> {
        Ok(BlockValues {
            values: Vec::new(),
            raw: Vec::new(),
            segments: Vec::new(),
            scratch: LogScratch::new()?,
            frames: FrameCache::default(),
        })
    }

    /// The values of the Nalimov entries `block` of half `h`, from the layout's `runs`.
    pub(super) fn fill(
        &mut self,
        layout: &Layout,
        parts: &[Assembly],
        file_values: &[Vec<u16>],
        h: Half,
        block: std::ops::Range<u64>,
        runs: &[std::ops::Range<u64>],
    ) -> io::Result<()> {
        let n = parts.len();
        let len = (block.end - block.start) as usize;
        self.values.clear();
        self.values.resize(n * len, TbValue::BROKEN);
        self.segments
            .resize_with(n, || (None, vec![TbValue::DRAW.raw(); SEGMENT as usize]));
        for run in runs {
            let run_len = (run.end - run.start) as usize;
            self.raw.clear();
            self.raw.resize(n * run_len, TbValue::DRAW.raw());
            for (p, part) in parts.iter().enumerate() {
                let raw = &mut self.raw[p * run_len..(p + 1) * run_len];
                let (read, seg_raw) = &mut self.segments[p];
                for seg in run.start / SEGMENT..run.end.div_ceil(SEGMENT) {
                    if *read != Some((h, seg)) {
                        seg_raw.fill(TbValue::DRAW.raw());
                        let first = seg * SEGMENT;
                        let file_value = &file_values[p];
                        part.resolved.log.for_each_resolved(
                            h,
                            seg,
                            &mut self.scratch,
                            |idx, d, is_won| {
                                let code = if is_won { win(d) } else { loss(d) };
                                seg_raw[(idx - first) as usize] = file_value[code as usize];
                            },
                        )?;
                        *read = Some((h, seg));
                    }
                    let from = run.start.max(seg * SEGMENT);
                    let to = run.end.min((seg + 1) * SEGMENT);
                    raw[(from - run.start) as usize..(to - run.start) as usize].copy_from_slice(
                        &seg_raw[(from - seg * SEGMENT) as usize..(to - seg * SEGMENT) as usize],
                    );
                }
            }
            let (values, raw, frames) = (&mut self.values, &self.raw, &mut self.frames);
            let mut put = |at: usize, ni: u64| {
                // An entry outside its block would be a wrong mapping: the index panics.
                let k = (ni - block.start) as usize;
                for p in 0..n {
                    values[p * len + k] = TbValue::from_raw(raw[p * run_len + at]);
                }
            };
            // A word's valid entries at once where it is one frame, else entry by entry.
            let mut word_values = |w: u64| {
                let words = (w * 64).max(run.start)..(w * 64 + 64).min(run.end);
                let word = (words.end - words.start == 64)
                    .then(|| layout.word(h, w))
                    .flatten();
                let Some((valid, frame)) = word else {
                    layout.scan(h, words, |idx, pos| {
                        if let Some(pos) = pos {
                            let at = (idx - run.start) as usize;
                            layout.nalimov_entries(h, idx, pos, frames, |ni| put(at, ni));
                        }
                    });
                    return;
                };
                if let Some(frame) = frame.filter(|_| valid != 0) {
                    let at = (w * 64 - run.start) as usize;
                    layout.nalimov_word(h, &frame, valid, frames, |x, ni| put(at + x.index(), ni));
                }
            };
            if !layout.run_words_nalimov_order(h, run, &mut word_values) {
                (run.start / 64..run.end.div_ceil(64)).for_each(word_values);
            }
        }
        Ok(())
    }
}
