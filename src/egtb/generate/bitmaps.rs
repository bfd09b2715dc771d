//! The pawnless solver in bitmaps (Thompson 1996, Sections 3-4: one bit a position a set),
//! for endgames whose working values do not fit in memory (six men: up to 21 G entries).
//!
//! Per half four bits an entry, in one cache line (`Bits`): won, lost, and the frontiers of
//! the pass (resolved at depth n, and at n + 1). No value and no pending capture value is
//! held per entry, and an un-move counter only where the memory allows:
//! - a capture's value comes from the sub-table, so the sub-table's positions resolved at
//!   depth d (DTM: its own depth in plies; DTZ and DTZ50: 0, a capture zeroes) join the
//!   frontier of pass d: un-captures from them (`moves::for_each_uncapture`) reach this
//!   endgame's positions the way un-moves from its own frontier do (`Seeds`);
//! - a predecessor of a loss is a win at the next depth; a predecessor of a win is a candidate,
//!   lost once every move leads to a win resolved no deeper than n: Thompson's forward check
//!   (`check_candidates`), in the successors' bits and, for captures, the sub-tables;
//! - that check fails again and again for entries that are not lost yet (KBBKN's DTM: 125 M
//!   checks for 16 M losses). Where four bits an entry fit beside the bitmaps under 16 GiB
//!   (`Counting`, `Nibbles`, in the line of the entry's bits), a half keeps a counter: the
//!   first check of an entry with at most 14 moves not yet known to lose counts them (up to
//!   28 in DTM's half that loses most, with a carry bit an entry, `HalfBits::carry`, and in
//!   a later solve's half that starts at DTM's quiet counts where the bit fits, as it does in
//!   KQRKBN's DTZ once White's few losses are kept as words, `Losable`; an entry with more
//!   quiet moves starts inexact at 14, `BitmapSolver::inexact_counts`), each later win of a
//!   successor counts it down,
//!   and the entry is lost when it reaches zero, with no check at all. Captures count too,
//!   counted down by the un-captures from the sub-tables' positions in the pass of their depth
//!   (`counts_captures`); before, a counted entry was still checked capture by capture each
//!   time one of them was reached. Near a long diagonal, where a successor may be its own
//!   mirror image, the quiet moves are counted by orbit counting (`arrivals_not_lost`) and the
//!   captures checked at zero. An entry that is never a candidate costs nothing. KBBKNN
//!   and KRBKNN have room for both halves, KQRKBN for one (the side with less material, which
//!   does most of the losing);
//! - a later solve of the endgame knows which entries the first lost (`BitmapSolver::earlier`)
//!   and makes no other a candidate. It counts those entries' moves before its first pass
//!   (`precount`), and in DTZ their captures need no sub-table: a loss's captures all lose
//!   (`captures_lose`). KQRKB's DTZ: 0.82 of the time. DTM counts before its first pass every
//!   entry of the side with less material, which loses most of them: KQRKB's DTM 0.92 of the
//!   time, KRBKN's 0.85. It writes those entries' quiet moves to disk (`move_counts`), and
//!   the later solves start their counters from them instead of counting again: KQRKB's DTZ
//!   0.80 of its time;
//! - a pass whose frontier holds more losses than the other half has entries left open finds
//!   its wins the other way round (`pull_wins`): each open entry's moves, won if one reaches a
//!   loss, instead of the un-moves from every loss, most of which reach entries won long ago.
//!   Which way costs less is estimated from a sample of the half's entries (`OpenEntries`)
//!   until the half's first pull, and after it from words, the unit both ways work in: those
//!   the last pull left open against the frontier's words with a loss (`PullChoice`, its
//!   weights from the steps' seconds that `gentb --pass-times` prints).
//!   KQRKB's DTZ pulls two of its passes: 0.83 of the time. The first pull of a half marks
//!   the broken entries it decodes as won, so that later pulls pass over them by the word
//!   (KQRKB: 68 M of White's 121 M live entries), which makes pulling the cheaper way in
//!   most of the tail passes: KQRKB's DTM 0.84 of its time, DTZ 0.88;
//! - where the layout's last man stands alone (`Layout::lone_last_man`: KQRKBN's knight, not
//!   KBBKNN's pair of knights), the 64 entries of a word of a plane are one frame of the other
//!   men with him on each square, and the passes take a word at a time, as Thompson's
//!   generator took a board (1996, Section 4): the un-moves of a frontier word are made once
//!   for all its entries, each reaching a word of predecessors with a mask
//!   (`for_each_pred_word`); a word's candidates, the open entries of a pull and the count
//!   before the first pass read each successor word once for all of them (`for_each_succ_word`,
//!   `WordCounts`); the files are walked word by word (`Layout::valid_in_word`). KQRKB: 0.72
//!   of the time, KBNKQ 0.65. Words whose kings both stand on the long diagonal put each
//!   predecessor and successor frame in normal form whole; near a diagonal a word's moves
//!   carry which successors are their own mirror images, and a word's counts and candidates
//!   are counted by orbit counting at once, as entry by entry (DTM: KQRKB 0.86 of its time,
//!   KBNKQ 0.86). Only the files take such words entry by entry;
//! - the depth of every entry is written to disk pass by pass (`depth_log`) and the values are
//!   put together in Nalimov order at the end, one king block at a time (`assemble`), the
//!   words of a king run taken in Nalimov's order of the men (`run_words_nalimov_order`).
//!
//! The two halves of a pass run one after the other: the first writes only the second's bits
//! while it reads its own, and the second tells the first's new entries (depth n + 1) from
//! its older ones by the frontier bit, so no check sees a win of the same pass.
//! Passes are over blocks of entries, each independent of the others within a pass, and could
//! be split across machines by blocks of king placements (the layout numbers kings first).

use super::depth_log::{DepthLog, DepthReader, LogScratch, SEGMENT};
use super::layout::Layout;
use super::move_counts::{nibble, CountsWriter, MoveCounts};
use super::moves::{
    for_each_capturer_frame_uncapture, for_each_conversion, for_each_frame_capture,
    for_each_frame_move, for_each_frame_uncapture, for_each_move, for_each_quiet,
    for_each_quiet_set, for_each_uncapture, in_check, may_convert, Legality, MoveClass,
};
use super::solve::{
    for_each_pred, for_each_pred_word, for_each_succ_word, to_file_value, SubTables,
};
use super::GenError;
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::format::plies::{loss, wdl_of_result, win, RULE50_PLIES};
use crate::egtb::format::Wdl5;
use crate::egtb::format::{Metric, Outcome, TbValue};
use crate::egtb::index::FrameCache;
use crate::egtb::index::{Half, Symmetry, TbPosition};
use crate::egtb::play::tables::DtmRuns;
use crate::egtb::Material;
use crate::memory::{try_vec, HugeArray, OutOfMemory};
use rayon::prelude::*;
use std::io;
use std::path::Path;
use std::sync::atomic::{
    AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};

/// `P` bitmaps of one bit per entry (the planes), interleaved by word: word k of every plane
/// lies in one group of `P` words, so that the bits of an entry share a cache line (P = 4:
/// 32-byte groups, 64-byte ones with a half's counters after the planes, and the array is
/// page-aligned). A six-man half is hundreds of megabytes a plane, and nearly every entry the
/// passes touch misses the caches: one miss an entry instead of one a plane.
///
/// Each plane has a summary bit per block of `BLOCK_WORDS` words that is set when a bit of the
/// block is: a pass of a deep endgame (KRBKNN: 446 passes a metric) drains and logs sparse
/// frontiers, and reads only the blocks that hold something instead of whole halves.
pub struct Bits<const P: usize> {
    words: HugeArray<AtomicU64>,
    /// Words of a group: the `P` planes', and after them, in a half that keeps un-move
    /// counters, the counters of the group's 64 entries (`Nibbles`).
    stride: usize,
    /// Words of one plane.
    plane_words: usize,
    /// Plane p's summary words are `blocks[p * summary..(p + 1) * summary]`. Invariant: every
    /// block with a bit set has its summary bit set.
    blocks: Vec<AtomicU64>,
    summary: usize,
}

/// Words of a plane one summary bit stands for (32,768 entries): a task's share of a drain.
const BLOCK_WORDS: usize = 512;

impl<const P: usize> Bits<P> {
    fn new(entries: u64) -> Result<Bits<P>, OutOfMemory> {
        Self::with_stride(entries, P)
    }

    /// Planes with `stride - P` words of something else after each group.
    fn with_stride(entries: u64, stride: usize) -> Result<Bits<P>, OutOfMemory> {
        let plane_words = entries.div_ceil(64) as usize;
        let summary = plane_words.div_ceil(BLOCK_WORDS).div_ceil(64);
        Ok(Bits {
            words: HugeArray::zeroed(stride * plane_words)?,
            stride,
            plane_words,
            blocks: try_vec(P * summary, || AtomicU64::new(0))?,
            summary,
        })
    }

    #[inline(always)]
    fn word(&self, plane: usize, w: usize) -> &AtomicU64 {
        &self.words[self.stride * w + plane]
    }

    #[inline(always)]
    fn flags(&self, plane: usize, block: usize) -> (&AtomicU64, u64) {
        (
            &self.blocks[plane * self.summary + block / 64],
            1 << (block % 64),
        )
    }

    /// Plane `plane`, for reading whole.
    pub(super) fn plane(&self, plane: usize) -> Plane<'_, P> {
        Plane { bits: self, plane }
    }

    /// Bits `i` of planes `a` and `b` (one group, one cache line).
    #[inline(always)]
    fn get2(&self, a: usize, b: usize, i: u64) -> (bool, bool) {
        let w = (i / 64) as usize;
        let m = 1u64 << (i % 64);
        (
            self.word(a, w).load(Relaxed) & m != 0,
            self.word(b, w).load(Relaxed) & m != 0,
        )
    }

    /// Asks for the cache line of entry `i`'s bits (all planes), to be read soon.
    #[inline(always)]
    fn prefetch(&self, i: u64) {
        prefetch(&self.words[self.stride * (i / 64) as usize]);
    }

    /// Sets bit `i` of `plane`; true if it was clear.
    #[inline(always)]
    fn set(&self, plane: usize, i: u64) -> bool {
        let m = 1u64 << (i % 64);
        let w = (i / 64) as usize;
        let word = self.word(plane, w);
        // Most entries a pass reaches were reached before: a plain load finds their bit set
        // without a locked instruction, which would also hold back the loads behind it. (Bits
        // are cleared only by `drain`, while nothing sets them.)
        if word.load(Relaxed) & m != 0 {
            return false;
        }
        let fresh = word.fetch_or(m, Relaxed) & m == 0;
        // A bit already set lies in a marked block (the invariant); a fresh one marks its own.
        if fresh {
            let (flags, bit) = self.flags(plane, w / BLOCK_WORDS);
            if flags.load(Relaxed) & bit == 0 {
                flags.fetch_or(bit, Relaxed);
            }
        }
        fresh
    }

    /// Sets the bits `mask` of word `w` of `plane`; those that were clear.
    #[inline(always)]
    fn set_word(&self, plane: usize, w: usize, mask: u64) -> u64 {
        let word = self.word(plane, w);
        // As `set`: a plain load first.
        if word.load(Relaxed) & mask == mask {
            return 0;
        }
        let fresh = !word.fetch_or(mask, Relaxed) & mask;
        if fresh != 0 {
            let (flags, bit) = self.flags(plane, w / BLOCK_WORDS);
            if flags.load(Relaxed) & bit == 0 {
                flags.fetch_or(bit, Relaxed);
            }
        }
        fresh
    }

    /// Runs `f` on the words of each block of `plane` whose summary bit is set (in parallel),
    /// clearing those bits first with `clear`; the sum of what `f` returns.
    ///
    /// Each marked block is a task of its own. Split as rayon splits a range by itself, a
    /// thread ran a quarter or an eighth of the half alone, and where a frontier is dense in
    /// one part of a half the other thread waited for it: KQRKBN's DTM passes spent seconds
    /// each on one core at their ends.
    fn marked_blocks(
        &self,
        plane: usize,
        clear: bool,
        f: impl Fn(std::ops::Range<usize>) -> u64 + Sync,
    ) -> u64 {
        let summary = &self.blocks[plane * self.summary..(plane + 1) * self.summary];
        let marked: Vec<usize> = summary
            .iter()
            .enumerate()
            .flat_map(|(k, flags)| {
                let bits = if clear {
                    flags.swap(0, Relaxed)
                } else {
                    flags.load(Relaxed)
                };
                Bitboard(bits).map(move |b| k * 64 + b.index())
            })
            .collect();
        marked
            .into_par_iter()
            .with_max_len(1)
            .map(|b| f(b * BLOCK_WORDS..((b + 1) * BLOCK_WORDS).min(self.plane_words)))
            .sum()
    }

    /// Clears every set bit of `plane`, calling `f(state, w, bits)` for each word `w` with bits
    /// set (in parallel, `state` made by `init` once per block of entries); the sum of what `f`
    /// returns. Nothing may set bits of that plane meanwhile.
    fn drain_words<S>(
        &self,
        plane: usize,
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, usize, u64) -> u64 + Sync,
    ) -> u64 {
        self.marked_blocks(plane, true, |words| {
            let mut state = init();
            let mut sum = 0;
            for w in words {
                let word = self.word(plane, w);
                // Most words are empty: a plain load skips them without a locked exchange.
                if word.load(Relaxed) == 0 {
                    continue;
                }
                sum += f(&mut state, w, word.swap(0, Relaxed));
            }
            sum
        })
    }
}

/// Asks the processor to fetch `x`'s cache line. The passes reach entries all over a half
/// (hundreds of megabytes): the lines of a position's predecessors are asked for together
/// while they are generated, so that their misses overlap instead of following one another
/// (each `reach` ends in a locked instruction that waits for its line).
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it neither reads nor writes memory the program sees
    // and cannot fault, whatever the address (here a valid reference); SSE, which it needs, is
    // part of every x86_64 processor.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Entries reached from one position, held while their cache lines are fetched
/// (`prefetch`); `reach` is then run on them in order. Made once per task, used for one
/// position after another.
struct Reached<'a> {
    state: &'a PassState,
    /// Do the entries held reach a loss?
    to_loss: bool,
    /// Do they reach it by a capture, to be recorded in `HalfBits::capture_wins`?
    by_capture: bool,
    /// Each word and the entries of it reached (one move each), and whether their counters
    /// count that move.
    entries: [(Half, u64, u64, bool); REACHED],
    count: usize,
}

/// More than the predecessors of any pawnless position of six men (four men of the side
/// that moved: at most 8 + 4 * 27); a larger set (a word's) is handled in turns.
const REACHED: usize = 128;

impl<'a> Reached<'a> {
    fn new(state: &'a PassState) -> Reached<'a> {
        Reached {
            state,
            to_loss: false,
            by_capture: false,
            entries: [(Half::Wtm, 0, 0, true); REACHED],
            count: 0,
        }
    }

    /// The entries pushed next reach a loss (`to_loss`) or a win.
    fn start(&mut self, to_loss: bool) {
        debug_assert_eq!(self.count, 0, "flushed");
        self.to_loss = to_loss;
        self.by_capture = false;
    }

    /// The entries pushed next reach a loss or a win by a capture (`start`).
    fn start_captures(&mut self, to_loss: bool) {
        self.start(to_loss);
        self.by_capture = true;
    }

    /// Entry `i` of half `h` is reached, by a move its counter counts or not (`counted`): its
    /// lines are asked for now, `reach` runs later.
    #[inline(always)]
    fn push(&mut self, h: Half, i: u64, counted: bool) -> u64 {
        self.push_word(h, i / 64, 1 << (i % 64), counted)
    }

    /// The entries `mask` of word `w` of half `h` are reached, one move each: `push` for a
    /// word at once.
    #[inline(always)]
    fn push_word(&mut self, h: Half, w: u64, mask: u64, counted: bool) -> u64 {
        let done = if self.count == REACHED {
            self.flush()
        } else {
            0
        };
        let b = &self.state.bits[h as usize];
        let i = w * 64 + mask.trailing_zeros() as u64;
        b.bits.prefetch(i);
        if self.to_loss && self.by_capture {
            if let Some(c) = &b.capture_wins {
                c.prefetch(i);
            }
        }
        if !self.to_loss {
            if let Some(l) = &b.losable {
                l.prefetch(i);
            }
            // With a counter (in the line of the bits) an entry becomes a candidate only at
            // its last open move: the candidate's line is rarely written, and not worth a line
            // fill an edge.
            if b.counters().is_none() {
                self.state.cand.prefetch(i);
            }
        }
        self.entries[self.count] = (h, w, mask, counted);
        self.count += 1;
        done
    }

    /// Runs `reach` on the entries held; how many it resolved.
    fn flush(&mut self) -> u64 {
        let mut done = 0;
        for &(h, w, mask, counted) in &self.entries[..self.count] {
            done += reach(self, h, w, mask, counted);
        }
        self.count = 0;
        done
    }
}

/// A count kept by one task and added to `total` when the task drops it: one locked add a block
/// of words, where one a word would have the threads fight over the total's line.
struct TaskCount<'a> {
    n: u64,
    total: &'a AtomicU64,
}

impl Drop for TaskCount<'_> {
    fn drop(&mut self) {
        self.total.fetch_add(self.n, Relaxed);
    }
}

/// The words of a pull (`BitmapSolver::pull_wins`): those whose open entries' moves it made,
/// and of them those it left with an open entry.
#[derive(Default)]
struct OpenWords {
    read: AtomicU64,
    left: AtomicU64,
}

/// One plane of a `Bits`, read word by word (`depth_log`).
#[derive(Clone, Copy)]
pub struct Plane<'a, const P: usize> {
    bits: &'a Bits<P>,
    plane: usize,
}

impl<const P: usize> Plane<'_, P> {
    /// Words in the plane.
    pub fn word_count(&self) -> usize {
        self.bits.plane_words
    }

    /// Word `w` (entries 64 w to 64 w + 63).
    pub fn word(&self, w: usize) -> u64 {
        self.bits.word(self.plane, w).load(Relaxed)
    }

    /// Words `range` as little-endian bytes in `out` (its contents replaced), each word read
    /// once and those of blocks the summary holds clear not at all: a word's line holds every
    /// plane's and the counters', so that a plane read whole costs a line a word. False if
    /// every word is clear.
    pub fn read_words(&self, range: std::ops::Range<usize>, out: &mut Vec<u8>) -> bool {
        out.clear();
        out.resize((range.end - range.start) * 8, 0);
        let mut any = 0;
        let mut w = range.start;
        while w < range.end {
            let block = w / BLOCK_WORDS;
            let end = ((block + 1) * BLOCK_WORDS).min(range.end);
            let (flags, bit) = self.bits.flags(self.plane, block);
            if flags.load(Relaxed) & bit != 0 {
                let bytes = &mut out[(w - range.start) * 8..(end - range.start) * 8];
                for (k, b) in bytes.chunks_exact_mut(8).enumerate() {
                    let x = self.word(w + k);
                    any |= x;
                    b.copy_from_slice(&x.to_le_bytes());
                }
            }
            w = end;
        }
        any != 0
    }

    /// May words `range` hold a set bit? (False: they are all clear.)
    pub fn may_hold(&self, range: std::ops::Range<usize>) -> bool {
        if range.is_empty() {
            return false;
        }
        (range.start / BLOCK_WORDS..=(range.end - 1) / BLOCK_WORDS).any(|b| {
            let (flags, bit) = self.bits.flags(self.plane, b);
            flags.load(Relaxed) & bit != 0
        })
    }
}

/// The planes of a half during a solve: won, lost, and the frontiers of the pass (resolved at
/// depth n, and at n + 1), which swap roles after each pass.
struct HalfBits {
    bits: Bits<4>,
    /// The plane of depth n: `FRONTIERS[0]` or `FRONTIERS[1]`.
    now: usize,
    /// The entries that can be lost (`BitmapSolver::earlier`); all, if not known.
    losable: Option<Losable>,
    /// A second digit of the counters, in DTM's counted half that loses most (`precount`):
    /// set where the counter holds the entry's open moves less `MAX_OPEN`, so that counts up
    /// to `MAX_CARRIED` are exact (`HalfBits::count_down_word`). It takes the bit an entry
    /// that the later solves give `losable`.
    carry: Option<Carry>,
    /// In DTM's other halves, in that same bit: the entries with a capture to a position the
    /// opponent loses, which the later solves win at their first pass from DTM's log instead
    /// of un-capturing every such position again (`BitmapSolver::reads_capture_wins`).
    capture_wins: Option<Bits<1>>,
}

/// The entries of a half that can be lost in a later solve: DTM's losses, one bit an entry,
/// or, where they are few, their words in order. KQRKBN's White lost 82,840 of its 5.7 G
/// entries: 924 MiB of bitmap (the pages it touches) for at most 1.3 MB of words, room that
/// Black's counters carry in (`BitmapSolver::counted_halves`).
enum Losable {
    Dense(Bits<1>),
    Sparse {
        /// The words that hold a loss, in order, and their bits.
        words: Vec<(u64, u64)>,
        /// A bit per `BLOCK_WORDS` words, set where one of them holds a loss: most words
        /// looked up hold none, and are told so without a search.
        blocks: Vec<u64>,
    },
}

impl Losable {
    /// Are `lost` entries of half `h` few enough to be kept as words (`Sparse`)? Sixteen
    /// bytes for at most one word each, against a sixteenth of the bitmap's bytes.
    fn sparse_fits(layout: &Layout, h: Half, lost: u64) -> bool {
        lost.saturating_mul(16) <= touched_bytes(layout, h, 1) / 16
    }

    /// The half's losses from `earlier`'s log.
    fn read(layout: &Layout, h: Half, earlier: &Resolved) -> Result<Losable, GenError> {
        let io = |e: io::Error| GenError::Io(earlier.log.path().to_path_buf(), e);
        if !Self::sparse_fits(layout, h, earlier.lost[h as usize]) {
            let bits = Bits::new(layout.size(h))?;
            // A word at a time: KQRKBN's DTZ spent 8 s setting its 3.8 G bits one by one.
            earlier
                .log
                .for_each_lost_word(h, |w, m| {
                    bits.set_word(0, w, m);
                })
                .map_err(io)?;
            return Ok(Losable::Dense(bits));
        }
        let words = std::sync::Mutex::new(Vec::new());
        earlier
            .log
            .for_each_lost_word(h, |w, m| {
                words
                    .lock()
                    .expect("no panic holding it")
                    .push((w as u64, m));
            })
            .map_err(io)?;
        let words = words.into_inner().expect("no panic holding it");
        Ok(Losable::from_words(layout.size(h), words))
    }

    /// The `Sparse` set of `entries` entries whose words hold `words` (each word once).
    fn from_words(entries: u64, mut words: Vec<(u64, u64)>) -> Losable {
        words.sort_unstable();
        let mut blocks = vec![0u64; entries.div_ceil(64 * BLOCK_WORDS as u64 * 64) as usize];
        for &(w, _) in &words {
            let b = w as usize / BLOCK_WORDS;
            blocks[b / 64] |= 1 << (b % 64);
        }
        Losable::Sparse { words, blocks }
    }

    /// The losable entries of word `w`.
    #[inline(always)]
    fn word(&self, w: usize) -> u64 {
        match self {
            Losable::Dense(bits) => bits.word(0, w).load(Relaxed),
            Losable::Sparse { words, blocks } => {
                let b = w / BLOCK_WORDS;
                if blocks[b / 64] >> (b % 64) & 1 == 0 {
                    return 0;
                }
                words
                    .binary_search_by_key(&(w as u64), |&(k, _)| k)
                    .map_or(0, |at| words[at].1)
            }
        }
    }

    /// Asks for the cache line of entry `i`'s bit, to be read soon.
    #[inline(always)]
    fn prefetch(&self, i: u64) {
        if let Losable::Dense(bits) = self {
            bits.prefetch(i);
        }
    }

    /// Calls `f(w, bits)` for every word `w` that holds a losable entry (in parallel).
    fn for_each_word(&self, f: impl Fn(usize, u64) + Sync) {
        match self {
            Losable::Dense(bits) => {
                bits.marked_blocks(0, false, |words| {
                    for w in words {
                        let m = bits.word(0, w).load(Relaxed);
                        if m != 0 {
                            f(w, m);
                        }
                    }
                    0
                });
            }
            Losable::Sparse { words, .. } => {
                words.par_iter().for_each(|&(w, m)| f(w as usize, m));
            }
        }
    }
}

/// The carry bits of a half's counters and the locks under which they are taken.
struct Carry {
    bits: Bits<1>,
    /// Spin locks, one for many counter words (`Carry::STRIPES`).
    locks: Vec<AtomicBool>,
}

impl Carry {
    const STRIPES: usize = 1 << 12;

    fn new(entries: u64) -> Result<Carry, OutOfMemory> {
        Ok(Carry {
            bits: Bits::new(entries)?,
            locks: (0..Self::STRIPES).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    #[inline(always)]
    fn word(&self, i: u64) -> &AtomicU64 {
        self.bits.word(0, (i / 64) as usize)
    }

    /// Runs `f` holding the lock of group `w`'s counters.
    #[inline(always)]
    fn locked<T>(&self, w: usize, f: impl FnOnce() -> T) -> T {
        let lock = &self.locks[w % Self::STRIPES];
        while lock
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let out = f();
        lock.store(false, Release);
        out
    }
}

const WON: usize = 0;
const LOST: usize = 1;
const FRONTIERS: [usize; 2] = [2, 3];

impl HalfBits {
    /// The planes of a half of `entries`, with an un-move counter per entry if `counted`.
    fn new(entries: u64, counted: bool) -> Result<HalfBits, OutOfMemory> {
        Ok(HalfBits {
            bits: Bits::with_stride(entries, if counted { 8 } else { 4 })?,
            now: FRONTIERS[0],
            losable: None,
            carry: None,
            capture_wins: None,
        })
    }

    /// The half's un-move counters, if it keeps them.
    #[inline(always)]
    fn counters(&self) -> Option<Nibbles<'_>> {
        (self.bits.stride > 4).then_some(Nibbles { bits: &self.bits })
    }

    /// The plane of depth n + 1.
    fn next(&self) -> usize {
        FRONTIERS[0] + FRONTIERS[1] - self.now
    }

    /// The most open moves a counter of this half holds exactly.
    fn most_counted(&self) -> u8 {
        if self.carry.is_some() {
            MAX_CARRIED
        } else {
            MAX_OPEN
        }
    }

    /// Starts entry `i`'s counter, `NOT_COUNTED`, at `open` (at most `most_counted`) moves,
    /// with a carry past `MAX_OPEN`. (Only the thread checking its word writes its bits, and
    /// no counter is counted down meanwhile.)
    #[inline(always)]
    fn start_count(&self, c: &Nibbles, i: u64, open: u8) {
        let carried = open > MAX_OPEN;
        c.start(i, left(open - if carried { MAX_OPEN } else { 0 }));
        if let Some(carry) = &self.carry {
            let bit = 1 << (i % 64);
            if carried {
                carry.word(i).fetch_or(bit, Relaxed);
            } else if carry.word(i).load(Relaxed) & bit != 0 {
                carry.word(i).fetch_and(!bit, Relaxed);
            }
        }
    }

    /// Counts the entries `mask` of group `w` down by one each (`Nibbles::count_down_word`);
    /// those that were at most `left(1)` before, and stay there, are returned. A counter about
    /// to reach zero with its carry set is started again at `MAX_OPEN` less that move instead.
    ///
    /// Why no move is lost: a counter above `left(1)` is counted down without a lock (the
    /// exchange fails if it has fallen to `left(1)` meanwhile), and one at `left(1)` or below
    /// only under its group's lock, which is also the only place a carry bit is read or
    /// cleared during the passes. So under the lock the counter changes only by lock-free
    /// moves from above `left(1)` down to `left(1)`, and the carry it reads is the one that
    /// goes with the counter: each entry's open moves stay the counter plus `MAX_OPEN` for a
    /// carry.
    #[inline(always)]
    fn count_down_word(&self, c: &Nibbles, w: usize, mask: u64) -> u64 {
        let Some(carry) = &self.carry else {
            return c.count_down_word(w, mask);
        };
        let mut last = 0;
        for part in 0..4 {
            let on = spread_nibbles(mask >> (16 * part));
            if on == 0 {
                continue;
            }
            let word = c.counter_word(w, part);
            let x = count_down_above(word, on, left(1));
            let low = on & !nibbles_above(x, left(1));
            if low == 0 {
                continue;
            }
            last |= carry.locked(w, || {
                let mut last = 0;
                for k in Bitboard(gather_nibbles(low)).map(|k| k.index()) {
                    let i = (w * 64 + part * 16 + k) as u64;
                    let (shift, bit) = (4 * k as u32, 1u64 << (i % 64));
                    let mut x = word.load(Relaxed);
                    loop {
                        let v = (x >> shift & 0xF) as u8;
                        let takes = v == left(1) && carry.word(i).load(Relaxed) & bit != 0;
                        let new = if takes {
                            x + ((MAX_OPEN as u64 - 1) << shift)
                        } else if v > left(0) {
                            x - (1 << shift)
                        } else {
                            last |= 1 << k;
                            break;
                        };
                        match word.compare_exchange_weak(x, new, Relaxed, Relaxed) {
                            Ok(_) => {
                                if takes {
                                    carry.word(i).fetch_and(!bit, Relaxed);
                                } else if v <= left(1) {
                                    last |= 1 << k;
                                }
                                break;
                            }
                            Err(now) => x = now,
                        }
                    }
                }
                last
            }) << (16 * part);
        }
        last
    }
}

/// What the passes of a solve read and write: the planes of both halves, the candidates (the
/// predecessors of the pass's wins, to be checked) and the un-move counters.
struct PassState {
    bits: [HalfBits; 2],
    cand: Bits<1>,
    /// Do the counters count captures too (`BitmapSolver::counts_captures`)?
    counts_captures: bool,
}

/// Bytes of memory a solve of `layout` (of `material`) takes at most: five bits an entry (the
/// four planes and `losable`, in DTM the counters' carry bits or the capture wins in its
/// place), one candidate bit per entry of the larger half, and four bytes per entry of each
/// sub-table half that seeds it (counted as if every entry were decided).
/// The bitmaps count only the pages the solve touches (`touched_bytes`).
pub fn memory_bytes(layout: &Layout, material: &Material) -> u64 {
    let [w, b] = Half::BOTH.map(|h| touched_bytes(layout, h, 1));
    let bits = 5 * (w + b) + w.max(b);
    let mut seeds = 0;
    for mover in Color::BOTH {
        for captured in [
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
        ] {
            if material.count(!mover, captured) == 0 {
                continue;
            }
            let sub = material.without(!mover, captured);
            if sub.men() > 2 {
                let index = crate::egtb::index::EndgameIndex::new(&sub.canonical().0);
                seeds += 4 * Half::BOTH.iter().map(|&h| index.size(h)).max().unwrap_or(0);
            }
        }
    }
    bits + seeds
}

/// The pages that an array of `bits` bits an entry over half `h` of `layout` has touched at
/// most, in bytes: those of the live runs (`Layout::live_runs`), rounded out to the huge pages
/// (2 MiB) that `HugeArray` asks for. Interleaved planes (`Bits`) count as one array of their
/// bits together: the same bytes.
fn touched_bytes(layout: &Layout, h: Half, bits: u64) -> u64 {
    const PAGE: u64 = 2 << 20;
    let mut total = 0;
    let mut end_so_far = 0;
    for run in layout.live_runs(h) {
        let start = (run.start * bits / 8 / PAGE * PAGE).max(end_so_far);
        let end = (run.end * bits).div_ceil(8).div_ceil(PAGE) * PAGE;
        total += end.saturating_sub(start);
        end_so_far = end_so_far.max(end);
    }
    total
}

/// Where the seeds of a solve come from (`Seeds` without the entries).
struct SeedPlan {
    table: usize,
    half: Half,
    flip: bool,
    mover: Color,
    captured: PieceType,
}

/// Every sub-table side whose positions un-capture into `material`'s.
fn seed_plan(subs: &SubTables, material: &Material) -> Vec<SeedPlan> {
    let mut out = Vec::new();
    for mover in Color::BOTH {
        for captured in [
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
        ] {
            let Some(t) = subs.capture_table(mover, captured) else {
                continue;
            };
            let table = &subs.tables[t];
            let y = !mover;
            let sub = material.without(y, captured);
            for &half in table.index().stored_halves() {
                for flip in [false, true] {
                    let (m, stm) = if flip {
                        (table.material().flipped(), !half.stm())
                    } else {
                        (table.material(), half.stm())
                    };
                    if m == sub && stm == y {
                        out.push(SeedPlan {
                            table: t,
                            half,
                            flip,
                            mover,
                            captured,
                        });
                    }
                }
            }
        }
    }
    out
}

/// One side of one sub-table seen from this endgame: its positions with Y (`!mover`) to move,
/// reached by `mover`'s capture of a man of kind `captured`, grouped by the depth at which
/// they join the frontier.
struct Seeds {
    table: usize,
    half: Half,
    /// The sub-table's colours are the flip of this endgame's.
    flip: bool,
    mover: Color,
    captured: PieceType,
    /// `entries[starts[d]..starts[d + 1]]` join at depth d.
    starts: Vec<usize>,
    /// Sub-table entries; `Y_WINS` marks those that Y, to move, wins.
    entries: Vec<u32>,
    /// The man whose squares make the runs of each depth's entries, where they are in an order
    /// where he moves fastest (`seed` un-captures a run at once).
    frames: Option<Frames>,
}

/// Which man a run of seeds differs in alone (`Seeds::frames`), and so how `seed` un-captures
/// the run at once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Frames {
    /// The layout's lone last man, who stands by or makes the capture
    /// (`for_each_frame_uncapture`).
    Lone,
    /// The one man of this type of the side that captured, who took the layout's lone last man
    /// (`for_each_capturer_frame_uncapture`); the other men's un-captures go entry by entry.
    Capturer(PieceType),
}

const Y_WINS: u32 = 1 << 31;

/// A finished solve: the depth at which every decided entry was resolved, and which are won,
/// on disk.
pub struct Resolved {
    log: DepthReader,
    /// `kinds[d]`: `WON_KIND` if an entry was won at depth d, `LOST_KIND` if one was lost.
    kinds: Vec<u8>,
    /// The quiet moves of every entry of the half counted before the first pass, where this
    /// solve counted one (`precount`).
    quiet: Option<MoveCounts>,
    /// Per half: the log holds its entries with a capture to a position the opponent loses
    /// (`HalfBits::capture_wins`).
    capture_wins: [bool; 2],
    /// Per half: how many entries it lost.
    lost: [u64; 2],
}

const WON_KIND: u8 = 1;
const LOST_KIND: u8 = 2;

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

pub struct BitmapSolver<'a> {
    pub layout: &'a Layout<'a>,
    pub subs: &'a SubTables,
    pub material: Material,
    pub metric: Metric,
    /// An earlier solve of the endgame (DTM's). Its depth 0, the mates (the same in every
    /// metric), is read from its log instead of found again by a scan of every entry (KRBKNN:
    /// about 100 s). And only the entries it lost can be lost now (DTZ has DTM's results,
    /// DTZ50 turns some losses into draws): no other entry is ever a candidate, so the passes
    /// check no drawn or won entry move by move, as they do for DTM, again and again.
    pub earlier: Option<&'a Resolved>,
    /// Which halves keep an un-move counter (four bits) per entry (`counters`).
    pub counting: Counting,
    /// How the wins of a pass are found (`Pulling`).
    pub pulling: Pulling,
    /// Print each pass's steps, their seconds and what decided the pull (`PassTimes`).
    pub pass_times: bool,
}

/// One half's step of a pass as `gentb --pass-times` prints it: what `pull_costs_less` saw,
/// what the pass found, and the seconds of each step, so that the choice between pulling and
/// pushing can be checked against what each cost.
#[derive(Default)]
struct PassTimes {
    pulled: bool,
    /// The other half's frontier: its losses (entries, and words that hold one).
    losses: u64,
    loss_words: u64,
    /// The predecessors' half: valid entries left open (estimated), and the words a pull read
    /// with an open entry.
    open_valid: u64,
    open_words: u64,
    won: u64,
    lost: u64,
    pull: f64,
    frontier: f64,
    seeds: f64,
    checks: f64,
}

/// Seconds from one step to the next (`PassTimes`).
struct Stopwatch(std::time::Instant);

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch(std::time::Instant::now())
    }

    /// Seconds since the start or the last lap; starts the next.
    fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        (now - std::mem::replace(&mut self.0, now)).as_secs_f64()
    }
}

/// How a pass finds the entries its frontier's losses make won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pulling {
    /// By un-moves from the losses (push), or, where fewer entries are left open than the
    /// frontier holds losses, by the moves of the entries left open (pull): whichever makes
    /// fewer moves (`OpenEntries::pull_costs_less`).
    Chosen,
    /// Never pull: Thompson's un-moves alone (for comparisons).
    Never,
    /// Pull in every pass whose frontier holds losses (for tests of the pulled passes).
    Always,
}

/// Which halves of a bitmap solve keep un-move counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// As many as fit beside the solve under `MEMORY_CAP`.
    WhereMemoryAllows,
    /// None: Thompson's checks alone, as in the largest endgames.
    Off,
    /// This half only, if it fits (for tests of a solve that mixes the two).
    Only(Half),
}

/// Anonymous memory a bitmap build may take: the counters are added only below it.
const MEMORY_CAP: u64 = 16 << 30;

/// Standard material values of the side to move of `h`, to guess which side loses.
fn side_value(material: &Material, h: Half) -> u32 {
    [
        (PieceType::Queen, 9),
        (PieceType::Rook, 5),
        (PieceType::Bishop, 3),
        (PieceType::Knight, 3),
    ]
    .iter()
    .map(|&(kind, v)| v * material.count(h.stm(), kind) as u32)
    .sum()
}

impl BitmapSolver<'_> {
    /// `seed_depth` of a sub-endgame position for DTZ or DTZ50, from its result (the zeroing
    /// move stops the count: the sub-endgame's own distances do not matter).
    fn zeroing_seed(&self, r: Wdl5) -> Option<(u16, bool)> {
        match wdl_of_result(r, self.metric == Metric::Dtz50) {
            2 => Some((0, true)),
            0 => Some((0, false)),
            _ => None,
        }
    }

    /// The depth in plies at which a sub-table value joins the frontier, and whether Y wins;
    /// None for draws and broken entries.
    fn seed_depth(&self, v: crate::egtb::format::TbValue) -> Option<(u16, bool)> {
        let zero = self.metric != Metric::Dtm;
        match v.outcome() {
            Outcome::Win(k) => Some((if zero { 0 } else { 2 * k - 1 }, true)),
            Outcome::Loss(k) => Some((if zero { 0 } else { 2 * k }, false)),
            _ => None,
        }
    }

    /// Does every capture of a candidate lead to a loss at depth 0, so that no sub-table need
    /// be read? In DTZ every candidate is one of DTM's losses (`earlier`), whose captures all
    /// reach positions the opponent wins, and a zeroing move stops the count; so in DTZ50 too
    /// when no sub-endgame holds a result the rule changes.
    fn captures_lose(&self) -> bool {
        self.earlier.is_some()
            && match self.metric {
                Metric::Dtm => false,
                Metric::Dtz => true,
                Metric::Dtz50 => self.subs.rule50_clean(),
                Metric::Wdl => false,
            }
    }

    /// Are the first pass's wins by a capture to a position Y loses, in half `h`, read from
    /// DTM's record of them (`HalfBits::capture_wins`) instead of found by un-capturing every
    /// such position again? Where this solve's seeds lose where DTM's did: in DTZ, and in
    /// DTZ50 when no sub-endgame holds a result the rule changes. KQRKBN's DTZ spent 155 s on
    /// those un-captures, 2,321 M of White's entries won by them.
    fn reads_capture_wins(&self, h: Half) -> bool {
        self.earlier.is_some_and(|e| e.capture_wins[h as usize])
            && match self.metric {
                Metric::Dtm | Metric::Wdl => false,
                Metric::Dtz => true,
                Metric::Dtz50 => self.subs.rule50_clean(),
            }
    }

    /// Do the counters count an entry's captures as well as its quiet moves? Unless they all
    /// lose (`captures_lose`): un-captures from the sub-tables' positions count them down in
    /// the pass of their depth, so that an entry whose counter reaches zero is lost with no
    /// sub-table read, instead of checked capture by capture each time one of its captures is
    /// reached. (KQRKB's DTM: its checks took 21.2 s against 21.7 s before, within the noise;
    /// their cost is the first checks, which `precount` spares.)
    fn counts_captures(&self) -> bool {
        !self.captures_lose()
    }

    /// Is `h` the half of the side with less material, which loses most of its entries (KQRKB:
    /// 88% of Black's)? In a solve with no earlier one, its counters are all started before
    /// the first pass: nearly every entry of it becomes a candidate, and a count that reads no
    /// successor costs less than the first check it spares.
    fn loses_most(&self, h: Half) -> bool {
        side_value(&self.material, h) < side_value(&self.material, Half::of(!h.stm()))
    }

    /// DTM's quiet counts, where this later solve starts its counters at them: it counts no
    /// capture.
    fn quiet_counts(&self) -> Option<&MoveCounts> {
        self.earlier
            .and_then(|e| e.quiet.as_ref())
            .filter(|_| !self.counts_captures())
    }

    /// Which counters `precount` started at `MAX_OPEN`, below their entries' moves: in a
    /// later solve that starts them at DTM's quiet counts, those past what its counters hold
    /// (`MAX_OPEN`, or `MAX_CARRIED` in the half `carried`). (DTM's own counts are exact, with
    /// a carry up to `MAX_CARRIED`.)
    fn inexact_counts(&self, carried: Option<Half>) -> Inexact<'_> {
        match self.quiet_counts() {
            Some(q) => Inexact::PastQuiet {
                counts: q,
                carries: carried == Some(q.half()),
            },
            None => Inexact::Nowhere,
        }
    }

    /// Which halves keep un-move counters: those that fit beside the solve under
    /// `MEMORY_CAP`, the half of the side with less material first (it has the most losses,
    /// and so the most candidates). Without a counter, a predecessor of a win is checked move
    /// by move each time one of its successors is won (KBBKN's DTM: 125 M checks for 16 M
    /// losses); with one, it is lost when its last move is found to lose.
    ///
    /// And which half of a later solve carries its counters started at DTM's quiet counts
    /// (`HalfBits::carry`, one bit an entry more, where it fits after the counters), so that
    /// they start exact up to `MAX_CARRIED` quiet moves: KQRKBN's Black (king, bishop and
    /// knight) mostly has more than `MAX_OPEN`, and its DTZ counted each such loss's moves
    /// again at zero (93 s of checks).
    fn counted_halves(&self) -> ([bool; 2], Option<Half>) {
        let mut out = [false; 2];
        if self.counting == Counting::Off {
            return (out, None);
        }
        // Nothing of the solve is allocated yet: its bitmaps are taken off the memory
        // available here.
        let cap = crate::memory::usable_bytes().map_or(MEMORY_CAP, |u| u.min(MEMORY_CAP));
        let mut room = cap.saturating_sub(memory_bytes(self.layout, &self.material));
        // A half whose losable entries are kept as words leaves its bit an entry free.
        for h in Half::BOTH {
            if self
                .earlier
                .is_some_and(|e| Losable::sparse_fits(self.layout, h, e.lost[h as usize]))
            {
                room += touched_bytes(self.layout, h, 1);
            }
        }
        let mut halves = Half::BOTH;
        halves.sort_by_key(|&h| (side_value(&self.material, h), h != Half::Btm));
        for h in halves {
            if matches!(self.counting, Counting::Only(only) if only != h) {
                continue;
            }
            let size = touched_bytes(self.layout, h, 4);
            if size <= room {
                out[h as usize] = true;
                room -= size;
            }
        }
        let carried = self
            .quiet_counts()
            .map(MoveCounts::half)
            .filter(|&h| out[h as usize] && touched_bytes(self.layout, h, 1) <= room);
        (out, carried)
    }

    fn seeds(&self) -> Result<Vec<Seeds>, GenError> {
        seed_plan(self.subs, &self.material)
            .into_iter()
            .map(|p| self.seeds_of(p))
            .collect()
    }

    /// How the seeds of `plan` are un-captured a run at a time (`Frames`), if they can be: by
    /// the lone man where the sub-table's positions hold him, else by the capturer with the
    /// most un-moves of whom there is one.
    fn frames_of(&self, plan: &SeedPlan) -> Option<Frames> {
        let lone = self.layout.lone_last_man()?;
        if lone != (!plan.mover, plan.captured) {
            return Some(Frames::Lone);
        }
        [
            PieceType::Queen,
            PieceType::Rook,
            PieceType::Bishop,
            PieceType::Knight,
        ]
        .into_iter()
        .find(|&k| self.material.count(plan.mover, k) == 1)
        .map(Frames::Capturer)
    }

    /// The man a run of seeds with `frames` differs in (this endgame's colours).
    fn frame_man(&self, frames: Frames, mover: Color) -> (Color, PieceType) {
        match frames {
            Frames::Lone => self.layout.lone_last_man().expect("a lone last man"),
            Frames::Capturer(k) => (mover, k),
        }
    }

    fn seeds_of(&self, plan: SeedPlan) -> Result<Seeds, GenError> {
        let SeedPlan {
            table: t,
            half,
            flip,
            mover,
            captured,
        } = plan;
        const CHUNK: u64 = 1 << 14;
        let table = &self.subs.tables[t];
        let size = table.index().size(half);
        assert!(size < Y_WINS as u64, "sub-table entries fit 31 bits");
        let value = |idx: u64| match self.metric {
            Metric::Dtm => self.seed_depth(
                table
                    .dtm(half, idx, &self.subs.tables[..])
                    .expect("entry in the file"),
            ),
            _ => self.zeroing_seed(table.result(half, idx).expect("entry in the file")),
        };
        // DTM's values of the sub-table's side that its file leaves out take a one-ply search
        // each (KQRKBN: 67 s to read each twice): each is read once, and kept as `1 + depth`,
        // with `Y_WINS >> 16` where Y wins, 0 for none, while the entries are counted by
        // depth, then placed at its depth's cursor. Results are read twice: a code for each
        // entry is fresh memory, which costs more than reading them again (KQRKBN's DTZ: 18.1 s
        // against 9.5 s).
        const WINS: u16 = (Y_WINS >> 16) as u16;
        let kept = self.metric == Metric::Dtm;
        let codes = try_vec(if kept { size as usize } else { 0 }, || AtomicU16::new(0))?;
        let count = |c: &mut Vec<usize>, idx: u64, seed: Option<(u16, bool)>| {
            if let Some((d, y_wins)) = seed {
                if kept {
                    assert!(d < WINS - 1, "a seed's depth fits its code");
                    let code = (d + 1) | if y_wins { WINS } else { 0 };
                    codes[idx as usize].store(code, Relaxed);
                }
                if c.len() <= d as usize {
                    c.resize(d as usize + 1, 0);
                }
                c[d as usize] += 1;
            }
        };
        // The side left out, a run of one man's squares at a time (`dtm_by_runs`), its file
        // and results held decompressed while it is read: KQRKBN's DTM seeds took 59 s with
        // KQRKN's and KQRKB's positions with Black to move entry by entry, 32 s so.
        let run_man = table.run_man(half).filter(|_| kept);
        let held = run_man.and_then(|_| table.held_copy());
        let reader = held.as_ref().unwrap_or(table);
        let counted = match run_man {
            Some(_) => table.index().zones(half).0,
            None => size,
        };
        let counts = (0..counted.div_ceil(CHUNK))
            .into_par_iter()
            .fold(
                || (Vec::<usize>::new(), DtmRuns::default()),
                |(mut c, mut runs), k| {
                    let chunk = k * CHUNK..((k + 1) * CHUNK).min(counted);
                    match run_man {
                        Some(man) => {
                            let subs = &self.subs.tables[..];
                            reader.dtm_by_runs(half, chunk, man, subs, &mut runs, |idx, v| {
                                let v = v.expect("entry in the file");
                                count(&mut c, idx, self.seed_depth(v))
                            })
                        }
                        None => chunk.for_each(|idx| count(&mut c, idx, value(idx))),
                    }
                    (c, runs)
                },
            )
            .map(|(c, _)| c)
            .reduce(Vec::new, |a, b| {
                let (mut long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
                for (x, y) in long.iter_mut().zip(short) {
                    *x += y;
                }
                long
            });
        let mut starts = vec![0usize; counts.len() + 1];
        for (d, c) in counts.iter().enumerate() {
            starts[d + 1] = starts[d] + c;
        }
        let cursors: Vec<AtomicUsize> = starts.iter().map(|&s| AtomicUsize::new(s)).collect();
        let slots = try_vec(starts[counts.len()], || AtomicU32::new(0))?;
        let seed = |idx: u64| {
            if !kept {
                return value(idx);
            }
            let code = codes[idx as usize].load(Relaxed);
            (code != 0).then(|| ((code & !WINS) - 1, code & WINS != 0))
        };
        // Each depth's entries are placed in an order where the man of their runs moves
        // fastest (`seed` un-captures a run at once); Nalimov's index moves a man of the side
        // not to move fastest.
        let index = table.index();
        let frames = self.frames_of(&plan);
        let reordered = frames
            .map(|f| self.frame_man(f, mover))
            .map(|(c, k)| (if flip { !c } else { c }, k))
            .filter(|&m| index.significance(half).last() != Some(m));
        let places = match reordered {
            Some(_) => index.zones(half).0,
            None => size,
        };
        // A chunk's seeds take their places a depth at a time: one cursor an entry had the
        // threads fight over its line, in DTZ (every seed at depth 0) nearly one at a time.
        let found_init = || (Vec::new(), vec![0usize; counts.len()]);
        (0..places.div_ceil(CHUNK))
            .into_par_iter()
            .for_each_init(found_init, |(found, at), k| {
                found.clear();
                at.fill(0);
                let mut put = |idx: u64| {
                    if let Some((d, y_wins)) = seed(idx) {
                        found.push((d, idx as u32 | if y_wins { Y_WINS } else { 0 }));
                        at[d as usize] += 1;
                    }
                };
                let chunk = k * CHUNK..((k + 1) * CHUNK).min(places);
                match reordered {
                    Some(man) => index.each_with_man_fastest(half, chunk, man, |idx| {
                        if idx < size {
                            put(idx)
                        }
                    }),
                    None => chunk.for_each(put),
                }
                for (d, a) in at.iter_mut().enumerate().filter(|(_, a)| **a != 0) {
                    *a = cursors[d].fetch_add(*a, Relaxed);
                }
                for &(d, e) in found.iter() {
                    slots[at[d as usize]].store(e, Relaxed);
                    at[d as usize] += 1;
                }
            });
        Ok(Seeds {
            table: t,
            half,
            flip,
            mover,
            captured,
            frames,
            starts,
            entries: slots.into_iter().map(AtomicU32::into_inner).collect(),
        })
    }

    /// Runs the solve; the depths go to a log at `log_path`. `on_pass(pass, resolved)`.
    pub fn solve(
        &self,
        log_path: &Path,
        on_pass: &(dyn Fn(u32, u64) + Sync),
    ) -> Result<Resolved, GenError> {
        let io = |e: io::Error| GenError::Io(log_path.to_path_buf(), e);
        // The seconds of the steps before the first pass, for `pass_times`.
        let mut watch = Stopwatch::start();
        let mut setup = Vec::new();
        let mut lap = |step: &'static str| setup.push((step, watch.lap()));
        let layout = self.layout;
        let (counted, carried) = self.counted_halves();
        let half_bits = |h: Half| {
            let size = layout.size(h);
            // Where the mapping with counters is refused, the half goes without them.
            HalfBits::new(size, counted[h as usize]).or_else(|_| HalfBits::new(size, false))
        };
        let mut bits = [half_bits(Half::Wtm)?, half_bits(Half::Btm)?];
        let seeds = self.seeds()?;
        lap("seeds");
        let mut log = DepthLog::create(log_path).map_err(io)?;

        if let Some(earlier) = self.earlier {
            for h in Half::BOTH {
                bits[h as usize].losable = Some(Losable::read(layout, h, earlier)?);
            }
            lap("losable");
        }

        let counts_path = log_path.with_extension("counts");
        let (quiet, premated) = self.precount(&mut bits, &counts_path, carried)?;
        lap("counters");
        if self.earlier.is_none() {
            for h in Half::BOTH {
                let b = &mut bits[h as usize];
                if b.carry.is_none() {
                    b.capture_wins = Some(Bits::new(layout.size(h))?);
                }
            }
        }
        let inexact = self.inexact_counts(carried);
        let cand = Bits::<1>::new(layout.size(Half::Wtm).max(layout.size(Half::Btm)))?;
        // Every array of the solve is taken: those an earlier solve left that it did not take
        // again go back.
        crate::memory::release_recycled();
        let mut state = PassState {
            bits,
            cand,
            counts_captures: self.counts_captures(),
        };
        let bits = &state.bits;

        // Depth 0: the mates.
        let resolved = AtomicU64::new(0);
        // Per half: its entries resolved so far, and those lost at the pass's depth
        // (`OpenEntries::pull_costs_less`).
        let mut resolved_in = [0u64; 2];
        let mut lost_now = [0u64; 2];
        // Per half: its broken entries that a pull has marked won (`pull_wins`).
        let mut marked_broken = [0u64; 2];
        let mut lost_in = [0u64; 2];
        let mut choice = PullChoice::default();
        for h in Half::BOTH {
            let b = &bits[h as usize];
            let mates = AtomicU64::new(0);
            let mated = |idx: u64| {
                b.bits.set(LOST, idx);
                b.bits.set(b.now, idx);
                mates.fetch_add(1, Relaxed);
            };
            if let Some(earlier) = self.earlier {
                earlier.log.for_each_at_depth(h, 0, mated).map_err(io)?;
            } else if let Some(found) = premated[h as usize] {
                mates.fetch_add(found, Relaxed);
            } else {
                // Only the live runs hold positions: KQRKBN's scan skips over a quarter of its
                // entries.
                live_chunks(layout, h, |range| {
                    layout.scan_mates(h, range, |idx, pos| {
                        if in_check(pos) && for_each_move(pos, |_, _| false) {
                            mated(idx);
                        }
                    });
                    0
                });
            }
            log.append(h, 0, b.bits.plane(b.now)).map_err(io)?;
            let mates = mates.into_inner();
            resolved.fetch_add(mates, Relaxed);
            (resolved_in[h as usize], lost_now[h as usize]) = (mates, mates);
            lost_in[h as usize] = mates;
        }
        lap("mates");
        on_pass(0, resolved.load(Relaxed));
        let open = Half::BOTH.map(|h| OpenEntries::sample(layout, h));
        lap("sample");
        // Which kinds of entry each depth resolved: the values' range, known before the files
        // are written (their width).
        let mut kinds = vec![if resolved.load(Relaxed) > 0 {
            LOST_KIND
        } else {
            0
        }];

        let last_seed = seeds
            .iter()
            .map(|s| s.starts.len().saturating_sub(2))
            .max()
            .unwrap_or(0) as u16;
        let cap = if self.metric == Metric::Dtz50 {
            RULE50_PLIES
        } else {
            u16::MAX / 4
        };
        if self.pass_times {
            let steps: Vec<String> = setup.iter().map(|(s, t)| format!("{s} {t:.2} s")).collect();
            eprintln!(
                "{} {} before the passes: {}",
                self.material,
                self.metric.name(),
                steps.join(", ")
            );
        }
        let mut n: u16 = 0;
        while n < cap {
            let won = [AtomicU64::new(0), AtomicU64::new(0)];
            let lost = [AtomicU64::new(0), AtomicU64::new(0)];
            let mut times: [PassTimes; 2] = Default::default();
            for h in Half::BOTH {
                // Y = the side to move of `h`: its positions at depth n, in this table and in
                // the sub-tables its opponent captures into. Predecessors of losses are won
                // at once; those of wins are checked once each, after all are marked.
                let pred = Half::of(!h.stm());
                let ph = pred as usize;
                let losses = lost_now[h as usize];
                let pull = match self.pulling {
                    Pulling::Chosen => choice.pull_costs_less(h, n, losses).unwrap_or_else(|| {
                        open[ph].pull_costs_less(resolved_in[ph], marked_broken[ph], losses)
                    }),
                    Pulling::Never => false,
                    Pulling::Always => losses > 0,
                };
                let (loss_words, open_words) = (AtomicU64::new(0), OpenWords::default());
                let mut watch = Stopwatch::start();
                if pull {
                    marked_broken[ph] += self.pull_wins(&state, h, &won[ph], &open_words);
                }
                let t_pull = watch.lap();
                self.frontier(&state, h, pull, &won[ph], &loss_words);
                let t_frontier = watch.lap();
                let wins_read = n == 0 && self.win_recorded_captures(&state, pred, &won[ph])?;
                let captures_only = n == 0 && self.mark_captures_only(&state, pred);
                for s in seeds.iter().filter(|s| s.mover != h.stm()) {
                    self.seed(&state, s, n, [wins_read, captures_only], &won[ph]);
                }
                let t_seeds = watch.lap();
                self.check_candidates(&state, h, n, inexact, &lost[ph]);
                let loss_words = loss_words.into_inner();
                let left = open_words.left.into_inner();
                choice.saw(h, n, losses, loss_words, pull.then_some(left));
                times[ph] = PassTimes {
                    pulled: pull,
                    losses,
                    loss_words,
                    open_valid: open[ph].valid.saturating_sub(resolved_in[ph]),
                    open_words: open_words.read.into_inner(),
                    won: won[ph].load(Relaxed),
                    lost: lost[ph].load(Relaxed),
                    pull: t_pull,
                    frontier: t_frontier,
                    seeds: t_seeds,
                    checks: watch.lap(),
                };
            }
            let won = won.map(AtomicU64::into_inner);
            let lost = lost.map(AtomicU64::into_inner);
            for h in 0..2 {
                resolved_in[h] += won[h] + lost[h];
                lost_in[h] += lost[h];
            }
            lost_now = lost;
            let (won, lost): (u64, u64) = (won.iter().sum(), lost.iter().sum());
            for b in state.bits.iter_mut() {
                b.now = b.next();
            }
            let mut watch = Stopwatch::start();
            for h in Half::BOTH {
                let b = &state.bits[h as usize];
                log.append(h, n + 1, b.bits.plane(b.now)).map_err(io)?;
            }
            if self.pass_times {
                self.print_pass_times(n, &times, watch.lap());
            }
            kinds.push(if won > 0 { WON_KIND } else { 0 } | if lost > 0 { LOST_KIND } else { 0 });
            let done = won + lost;
            resolved.fetch_add(done, Relaxed);
            n += 1;
            on_pass(n as u32, resolved.load(Relaxed));
            if done == 0 && n > last_seed {
                break;
            }
        }
        // The won bits go to the log too: the values are put together after later solves,
        // which need the memory.
        let PassState { bits, cand, .. } = state;
        drop(cand);
        for h in Half::BOTH {
            let b = &bits[h as usize].bits;
            log.append_won(h, b.plane(WON)).map_err(io)?;
            log.append_lost(h, b.plane(LOST)).map_err(io)?;
            if let Some(c) = &bits[h as usize].capture_wins {
                log.append_capture_wins(h, c.plane(0)).map_err(io)?;
            }
        }
        let capture_wins = Half::BOTH.map(|h| bits[h as usize].capture_wins.is_some());
        drop(bits);
        Ok(Resolved {
            log: log.finish().map_err(io)?,
            kinds,
            quiet,
            capture_wins,
            lost: lost_in,
        })
    }

    /// Prints pass `n`'s steps of both halves (`PassTimes`) and the seconds its depth logs took.
    fn print_pass_times(&self, n: u16, times: &[PassTimes; 2], log_seconds: f64) {
        for h in Half::BOTH {
            let t = &times[h as usize];
            eprintln!(
                "{} {} pass {n} {}: {} losses {} ({} words), open {} ({} words read); \
                 won {} lost {}; pull {:.2} s frontier {:.2} s seeds {:.2} s checks {:.2} s",
                self.material,
                self.metric.name(),
                h.name(),
                if t.pulled { "pull" } else { "push" },
                t.losses,
                t.loss_words,
                t.open_valid,
                t.open_words,
                t.won,
                t.lost,
                t.pull,
                t.frontier,
                t.seeds,
                t.checks,
            );
        }
        eprintln!(
            "{} {} pass {n}: logs {log_seconds:.2} s",
            self.material,
            self.metric.name()
        );
    }

    /// Starts counters of a half that keeps them before the first pass, each at its entry's
    /// number of moves not known to lose (quiet moves, and captures where `counts_captures`),
    /// where a counter holds it: nothing is won yet, so that is the count a first check would
    /// find, without its read of every successor. Which entries:
    /// - after DTM's solve (`earlier`), those it lost. In DTZ each of their quiet moves is
    ///   counted down once in some pass and never checked (KQRKB's DTZ: 61.5 M of its 78.7 M
    ///   losses are started here). Where no capture is counted, their counts are DTM's quiet
    ///   counts, read from the file DTM wrote (`move_counts`), not found again;
    /// - in DTM, every entry of the half of the side with less material (`loses_most`). In the
    ///   other half, or with equal material, most entries are never candidates, and counting
    ///   them all cost more than it saved (KBBKNN). Each entry's quiet moves go to a file at
    ///   `counts_path` for the later solves; the counts are returned. This half's counters
    ///   carry (`HalfBits::carry`): KQRKBN's Black has up to 29 quiet moves, and a counter
    ///   started inexact at `MAX_OPEN` had its moves counted again at zero (its DTM's seventh
    ///   pass: 214 M entries). An entry with no move it counts may be a mate: those that are
    ///   are marked lost at depth 0 here, and their number returned for the half, which the
    ///   mates' own scan then passes over (KQRKBN's took 39 s for both halves).
    fn precount(
        &self,
        bits: &mut [HalfBits; 2],
        counts_path: &Path,
        carried: Option<Half>,
    ) -> Result<(Option<MoveCounts>, [Option<u64>; 2]), GenError> {
        let io = |e: io::Error| GenError::Io(counts_path.to_path_buf(), e);
        let counts_captures = self.counts_captures();
        let code = |open: u32| {
            if open <= MAX_OPEN as u32 {
                left(open as u8)
            } else {
                NOT_COUNTED
            }
        };
        // A quiet count as the file keeps it: its nibble, and whether it carries.
        let quiet_code = |quiet: u32| match quiet.checked_sub(MAX_OPEN as u32) {
            Some(over @ 1..) if quiet <= MAX_CARRIED as u32 => (left(over as u8), true),
            _ => (code(quiet), false),
        };
        // An entry's moves: its quiet ones, and those its counter counts.
        let count = |pos: &TbPosition| -> (u32, u32) {
            if !self.layout.no_symmetric_neighbours(pos) {
                let quiet = self.arrivals(pos);
                return (quiet, quiet);
            }
            let legal = Legality::of(pos);
            let mut quiet = 0;
            for_each_quiet_set(pos, &legal, |_, _, tos| {
                quiet += tos.count();
                true
            });
            let mut open = quiet;
            if counts_captures {
                open += conversions(pos, &legal);
            }
            (quiet, open)
        };
        let start = |c: &Nibbles, i: u64, v: u8| {
            if v != NOT_COUNTED {
                c.start(i, v);
            }
        };
        let mut written = None;
        let mut mates = [None; 2];
        for h in Half::BOTH {
            if bits[h as usize].counters().is_none() {
                continue;
            }
            if self.earlier.is_none() && self.loses_most(h) || carried == Some(h) {
                bits[h as usize].carry = Some(Carry::new(self.layout.size(h))?);
            }
            let b = &bits[h as usize];
            let c = &b.counters().expect("counted");
            if let Some(losable) = &b.losable {
                // The quiet counts the first solve wrote serve where no capture is counted.
                let stored = self.quiet_counts().filter(|q| q.half() == h);
                match stored {
                    // A word of counters at a time, in the counts' own layout: KQRKBN's DTZ
                    // took 22.6 s to start its 3.8 G counters one by one. Without a carry
                    // here, a count that carries in the file starts inexact.
                    Some(q) => {
                        losable.for_each_word(|w, mask| {
                            let carries = q.carried_word(w as u64) & mask;
                            let inexact = if b.carry.is_some() { 0 } else { carries };
                            for part in (0..4).filter(|p| mask >> (16 * p) & 0xFFFF != 0) {
                                let on = spread_nibbles(mask >> (16 * part)) * 0xF;
                                let off = spread_nibbles(inexact >> (16 * part)) * 0xF;
                                let counts = first_counts(q.word(w as u64, part as u64) & !off);
                                c.start_word(w, part, counts & on);
                            }
                            if let Some(carry) = b.carry.as_ref().filter(|_| carries != 0) {
                                carry.word(w as u64 * 64).fetch_or(carries, Relaxed);
                            }
                        });
                    }
                    None => losable.for_each_word(|w, mask| {
                        for i in Bitboard(mask).map(|s| w as u64 * 64 + s.0 as u64) {
                            start(c, i, code(count(&self.layout.decode_valid(h, i)).1))
                        }
                    }),
                }
            } else if let Some(carry) = &b.carry {
                let out = CountsWriter::create(counts_path, h, self.layout.size(h)).map_err(io)?;
                let failed = std::sync::OnceLock::new();
                let mated = AtomicU64::new(0);
                live_chunks(self.layout, h, |range| {
                    // Two counts a byte: chunks start at even entries (the runs are whole
                    // king placements, of an even number of entries), so none shares a byte.
                    assert!(
                        range.start.is_multiple_of(2),
                        "a chunk of counts starts a byte"
                    );
                    let mut bytes = [0u8; LIVE_CHUNK as usize / 2];
                    // The chunk's carry bits, a word of 64 entries at a time (its first and
                    // last words may be shared with the chunks beside it).
                    let first_word = range.start / 64;
                    let mut carried = [0u64; LIVE_CHUNK as usize / 64 + 1];
                    let mut quiet_carried = [0u64; LIVE_CHUNK as usize / 64 + 1];
                    let mut put = |i: u64, (quiet, counted): (u32, u32)| {
                        // No quiet move (both counts count them all): mated if in check
                        // with no capture either.
                        if counted == 0 {
                            let pos = self.layout.decode_valid(h, i);
                            if in_check(&pos) && conversions(&pos, &Legality::of(&pos)) == 0 {
                                b.bits.set(LOST, i);
                                b.bits.set(b.now, i);
                                mated.fetch_add(1, Relaxed);
                            }
                        }
                        // Past what a carry holds, counted again when few enough are open.
                        if counted <= MAX_CARRIED as u32 {
                            let carries = counted > MAX_OPEN as u32;
                            let held = counted - if carries { MAX_OPEN as u32 } else { 0 };
                            c.start(i, left(held as u8));
                            carried[(i / 64 - first_word) as usize] |= (carries as u64) << (i % 64);
                        }
                        let (byte, shift) = nibble(i - range.start);
                        let (nib, carries) = quiet_code(quiet);
                        bytes[byte] |= nib << shift;
                        quiet_carried[(i / 64 - first_word) as usize] |=
                            (carries as u64) << (i % 64);
                    };
                    for w in range.start / 64..range.end.div_ceil(64) {
                        let words = (w * 64).max(range.start)..(w * 64 + 64).min(range.end);
                        let whole = words.end - words.start == 64;
                        if !(whole && self.count_word(h, w, &mut put)) {
                            self.layout.scan(h, words, |i, pos| {
                                if let Some(pos) = pos {
                                    put(i, count(pos));
                                }
                            });
                        }
                    }
                    for (k, &m) in carried.iter().enumerate().filter(|(_, &m)| m != 0) {
                        carry
                            .word((first_word + k as u64) * 64)
                            .fetch_or(m, Relaxed);
                    }
                    let len = (range.end - range.start).div_ceil(2) as usize;
                    let words = (range.end.div_ceil(64) - first_word) as usize;
                    if let Err(e) = out
                        .write(range.start, &bytes[..len])
                        .and_then(|()| out.write_carries(range, &quiet_carried[..words]))
                    {
                        let _ = failed.set(e);
                    }
                    0
                });
                if let Some(e) = failed.into_inner() {
                    return Err(io(e));
                }
                written = Some(out.finish().map_err(io)?);
                mates[h as usize] = Some(mated.into_inner());
            }
        }
        Ok((written, mates))
    }

    /// `precount`'s count of the valid entries of word `w` of half `h` at once: `put(i, counts)`
    /// for each, with the number of its quiet moves and of the moves its counter counts
    /// (`for_each_frame_move`, `for_each_frame_capture`). Near a long diagonal the quiet moves
    /// by orbit counting (`for_each_succ_word`, as `arrivals`), and captures are not counted.
    /// False, and nothing put, where they go one by one: no lone last man.
    fn count_word(&self, h: Half, w: u64, mut put: impl FnMut(u64, (u32, u32))) -> bool {
        let Some(lone) = self.layout.lone_last_man() else {
            return false;
        };
        let (valid, frame) = match self.layout.word(h, w) {
            Some((valid, frame)) => (valid, frame),
            None => (self.layout.valid_in_word(h, w).unwrap_or(0), None),
        };
        if valid == 0 {
            return true;
        }
        let mut quiet = OrbitCounts::default();
        let Some(frame) = frame.filter(|f| self.layout.no_symmetric_neighbours(f)) else {
            let own_mirrored = for_each_succ_word(self.layout, h, w, valid, |_, _, at, mask, m| {
                quiet.add(at, mask, m)
            });
            let Some(own_mirrored) = own_mirrored else {
                return false;
            };
            for x in Bitboard(valid).map(|x| x.index()) {
                let q = quiet.get(x, own_mirrored);
                put(w * 64 + x as u64, (q, q));
            }
            return true;
        };
        for_each_frame_move(&frame, lone, valid, |_, mover, mask| {
            quiet.add(mover.lone_square(), mask, 0)
        });
        let mut captures = WordCounts::default();
        if self.counts_captures() {
            for_each_frame_capture(&frame, lone, valid, |mask| captures.add(mask));
        }
        for x in Bitboard(valid).map(|x| x.index()) {
            let q = quiet.get(x, 0);
            put(w * 64 + x as u64, (q, q + captures.get(x)));
        }
        true
    }

    /// Pass n for the frontier of half `h` (its entries resolved at depth n; cleared). Its
    /// losses are passed over where the pass was `pulled` (`pull_wins`); `loss_words` counts
    /// the words that hold one (`PullChoice`).
    fn frontier(
        &self,
        state: &PassState,
        h: Half,
        pulled: bool,
        fresh: &AtomicU64,
        loss_words: &AtomicU64,
    ) {
        let b = &state.bits[h as usize];
        let init = || {
            let words = TaskCount {
                n: 0,
                total: loss_words,
            };
            (Reached::new(state), words)
        };
        let done = b
            .bits
            .drain_words(b.now, init, |(reached, words), w, bits| {
                let lost = b.bits.word(LOST, w).load(Relaxed);
                words.n += (bits & lost != 0) as u64;
                let mut done = 0;
                for (to_loss, bits) in [(true, bits & lost), (false, bits & !lost)] {
                    if bits == 0 || to_loss && pulled {
                        continue;
                    }
                    reached.start(to_loss);
                    // A frame's entries at once where the layout allows, else one by one.
                    let by_word =
                        for_each_pred_word(self.layout, h, w as u64, bits, |ph, pw, m| {
                            done += reached.push_word(ph, pw, m, true);
                        });
                    if !by_word {
                        for s in Bitboard(bits) {
                            let idx = w as u64 * 64 + s.0 as u64;
                            let pos = self.layout.decode_valid(h, idx);
                            for_each_pred(self.layout, idx, &pos, false, |ph, pi| {
                                done += reached.push(ph, pi, true);
                            });
                        }
                    }
                    done += reached.flush();
                }
                done
            });
        fresh.fetch_add(done, Relaxed);
    }

    /// Pass n, pulled: the entries of the half before `h` left open that have a quiet move to
    /// one of `h`'s losses (depth n or less) are won at n + 1, as the un-moves from `h`'s
    /// frontier would have found them. Where few entries are left open, their moves are far
    /// fewer than the frontier's un-moves (KQRKB's DTZ: 3.8 M open against 30.5 M losses).
    ///
    /// A broken entry is never resolved, so it stays open, and each pull would decode it again
    /// (KQRKB: 68 M of White's 121 M live entries). The first pull to find one marks it won,
    /// which no other reader of that bit can see: no move or un-move reaches a broken entry,
    /// and the values are read from the depths logged, which never hold it. Returns how many
    /// it marked. `words` counts the words whose open entries' moves it made (broken entries
    /// have none), and of them those with an entry still open, no fewer than the next pull
    /// will read (`PullChoice`).
    fn pull_wins(&self, state: &PassState, h: Half, fresh: &AtomicU64, words: &OpenWords) -> u64 {
        let ph = Half::of(!h.stm());
        let (pb, sb) = (&state.bits[ph as usize], &state.bits[h as usize]);
        let next = sb.next();
        let open_move = |i: u64| !matches!(sb.bits.get2(LOST, next, i), (true, false));
        let marked = AtomicU64::new(0);
        let done = live_chunks(self.layout, ph, |range| {
            let (mut done, mut broken, mut read, mut left) = (0, 0, 0, 0);
            for w in (range.start / 64) as usize..range.end.div_ceil(64) as usize {
                let base = w as u64 * 64;
                let mut open =
                    !(pb.bits.word(WON, w).load(Relaxed) | pb.bits.word(LOST, w).load(Relaxed));
                // DTM's losses cannot be won.
                if let Some(l) = &pb.losable {
                    open &= !l.word(w);
                }
                open &= in_word(base, &range);
                // Two or more open: the frame's moves once for all of them.
                if open.count_ones() >= 2 {
                    if let Some(valid) = self.layout.valid_in_word(ph, w as u64) {
                        for i in Bitboard(open & !valid).map(|s| base + s.0 as u64) {
                            broken += pb.bits.set(WON, i) as u64;
                        }
                        open &= valid;
                        if open == 0 {
                            continue;
                        }
                        if let Some(won) = self.reaches_loss_word(sb, ph, w as u64, open) {
                            let won = pb.bits.set_word(WON, w, won);
                            if won != 0 {
                                pb.bits.set_word(pb.next(), w, won);
                            }
                            done += won.count_ones() as u64;
                            read += 1;
                            left += (open & !won != 0) as u64;
                            continue;
                        }
                    }
                }
                let (mut moved, mut still_open) = (false, false);
                while open != 0 {
                    let i = base + open.trailing_zeros() as u64;
                    open &= open - 1;
                    let Some(pos) = self.layout.decode(ph, i) else {
                        broken += pb.bits.set(WON, i) as u64;
                        continue;
                    };
                    moved = true;
                    let legal = Legality::of(&pos);
                    if self.quiet_entries(i, &pos, &legal, sb, open_move) {
                        still_open = true;
                    } else if pb.bits.set(WON, i) {
                        pb.bits.set(pb.next(), i);
                        done += 1;
                    }
                }
                read += moved as u64;
                left += still_open as u64;
            }
            marked.fetch_add(broken, Relaxed);
            words.read.fetch_add(read, Relaxed);
            words.left.fetch_add(left, Relaxed);
            done
        });
        fresh.fetch_add(done, Relaxed);
        marked.into_inner()
    }

    /// Pass n for the sub-table positions of `s` at depth n: their un-captures, but for those
    /// that Y loses where `skipped[0]` (`reads_capture_wins`) and those Y wins where
    /// `skipped[1]` (`mark_captures_only`).
    fn seed(&self, state: &PassState, s: &Seeds, n: u16, skipped: [bool; 2], fresh: &AtomicU64) {
        let Some(range) = s.starts.get(n as usize..=n as usize + 1) else {
            return;
        };
        if skipped == [true; 2] {
            return;
        }
        let table = &self.subs.tables[s.table];
        // Entries one after the other that differ only in one man's square (`seeds_of` placed
        // them so) are un-captured a run at a time, a word of predecessors at once.
        let man = s.frames.map(|f| self.frame_man(f, s.mover));
        let but = match s.frames {
            Some(Frames::Capturer(k)) => Some(k),
            _ => None,
        };
        s.entries[range[0]..range[1]]
            .par_chunks(1 << 10)
            .for_each(|chunk| {
                let mut done = 0;
                let mut reached = Reached::new(state);
                let mut near = None;
                // The run being gathered: its frame (the men but the run's), his squares, and
                // whether Y wins them.
                let mut run: Option<(TbPosition, u64, bool)> = None;
                for &e in chunk {
                    let y_wins = e & Y_WINS != 0;
                    if skipped[y_wins as usize] {
                        continue;
                    }
                    let idx = (e & !Y_WINS) as u64;
                    // Files that leave broken entries unmarked give them a neighbour's value.
                    let Some(pos) = table.index().decode(s.half, idx) else {
                        continue;
                    };
                    let mut pos = if s.flip { pos.color_flipped() } else { pos };
                    if s.frames != Some(Frames::Lone) {
                        reached.start_captures(!y_wins);
                        for_each_uncapture(&pos, s.captured, but, |pred| {
                            let (ph, pi) = self.layout.encode_near(&mut near, pred);
                            // Near a diagonal the counters leave captures out.
                            let counted =
                                state.counts_captures && self.layout.no_symmetric_neighbours(pred);
                            done += reached.push(ph, pi, counted);
                        });
                        done += reached.flush();
                    }
                    let Some((c, k)) = man else {
                        continue;
                    };
                    let at = std::mem::take(&mut pos.pieces[c.index()][k.index()]).0;
                    match &mut run {
                        Some((frame, on, wins)) if *frame == pos && *wins == y_wins => *on |= at,
                        _ => {
                            if let Some(last) = run.replace((pos, at, y_wins)) {
                                done += self.uncapture_run(&mut reached, s, last);
                            }
                        }
                    }
                }
                if let Some(last) = run {
                    done += self.uncapture_run(&mut reached, s, last);
                }
                fresh.fetch_add(done, Relaxed);
            });
    }

    /// `seed`'s un-captures of a run of sub-table positions (`Seeds::frames`): its frame (the
    /// men but the run's), the squares of the run's man, and whether Y wins them (all of them,
    /// or none); each predecessor frame's words at once.
    fn uncapture_run(
        &self,
        reached: &mut Reached,
        s: &Seeds,
        (frame, on, y_wins): (TbPosition, u64, bool),
    ) -> u64 {
        let lone = self.layout.lone_last_man().expect("a lone last man");
        let ph = Half::of(s.mover);
        let mut done = 0;
        reached.start_captures(!y_wins);
        let mut push = |pred: &TbPosition, mask: u64| {
            let fw = self.layout.frame_word(pred);
            // Near a diagonal the counters leave captures out; the kings decide.
            let counted =
                reached.state.counts_captures && self.layout.no_symmetric_neighbours(pred);
            for (sym, part) in fw.parts(mask) {
                if part != 0 {
                    done += reached.push_word(ph, fw.word, sym.bitboard(Bitboard(part)).0, counted);
                }
            }
        };
        match s.frames {
            Some(Frames::Capturer(k)) => {
                for_each_capturer_frame_uncapture(&frame, k, on, lone, &mut push)
            }
            _ => for_each_frame_uncapture(&frame, lone, on, s.captured, &mut push),
        }
        done + reached.flush()
    }

    /// The first pass's wins of half `h` by a capture to a position Y loses, read from DTM's
    /// record where this solve reads it (`reads_capture_wins`); false, and nothing won, where
    /// it does not.
    fn win_recorded_captures(
        &self,
        state: &PassState,
        h: Half,
        fresh: &AtomicU64,
    ) -> Result<bool, GenError> {
        let Some(earlier) = self.earlier.filter(|_| self.reads_capture_wins(h)) else {
            return Ok(false);
        };
        let b = &state.bits[h as usize];
        earlier
            .log
            .for_each_capture_win_word(h, |w, mask| {
                fresh.fetch_add(win_word(b, w, mask), Relaxed);
            })
            .map_err(|e| GenError::Io(earlier.log.path().to_path_buf(), e))?;
        Ok(true)
    }

    /// The first pass's candidates of half `h` that the un-captures from the sub-table
    /// positions Y wins would mark (`seed`), marked from the counters instead; false, and
    /// nothing marked, where it cannot be. Where every capture loses (`captures_lose`), those
    /// un-captures count no counter down, and so make candidates only of the open losable
    /// entries whose counter is at zero. At the first pass such an entry has no quiet move
    /// (or its last was found to lose in this pass, and made it a candidate then), and each of
    /// its moves is a capture to a position Y wins, which reaches it. An entry with no counter
    /// yet has more quiet moves than a counter holds, none of them to a position won at depth
    /// 0, so it cannot lose in this pass, and its first reach makes it a candidate. KQRKBN's
    /// DTZ spent 36.5 s on these un-captures; the scan reads each word of the half's losable
    /// entries once, sequentially.
    fn mark_captures_only(&self, state: &PassState, h: Half) -> bool {
        let b = &state.bits[h as usize];
        let (Some(c), Some(losable)) = (b.counters(), &b.losable) else {
            return false;
        };
        if !self.captures_lose() {
            return false;
        }
        losable.for_each_word(|w, losable| {
            let open =
                losable & !(b.bits.word(WON, w).load(Relaxed) | b.bits.word(LOST, w).load(Relaxed));
            let zero = c.at_most(w, open, left(0)) & !c.at_most(w, open, NOT_COUNTED);
            if zero != 0 {
                state.cand.set_word(0, w, zero);
            }
        });
        true
    }

    /// The candidates marked in the half before `h` (predecessors of its wins at depth n):
    /// lost at n + 1 if every move now loses. Clears `cand`.
    fn check_candidates(
        &self,
        state: &PassState,
        h: Half,
        n: u16,
        inexact: Inexact,
        fresh: &AtomicU64,
    ) {
        let ph = Half::of(!h.stm());
        let bits = &state.bits;
        let b = &bits[ph as usize];
        let counted = b.counters();
        // Near a diagonal the counters leave captures out, to be checked at zero; the kings
        // alone tell.
        let captures_counted = |pi: u64| {
            state.counts_captures && self.layout.entry_has_no_symmetric_neighbours(ph, pi)
        };
        let done = state.cand.drain_words(
            0,
            || (),
            |_, w, cands| {
                let wi = w;
                let w = w as u64;
                let mut open = cands
                    & !(b.bits.word(WON, wi).load(Relaxed) | b.bits.word(LOST, wi).load(Relaxed));
                if open == 0 {
                    return 0;
                }
                // Which entries need their quiet moves counted one by one (the others are known to
                // have none left open).
                // Counted down to zero, exactly, with no capture left to check: lost, the word
                // at once (KQRKBN's DTZ: 3.8 G of Black's losses).
                let (to_count, lost) = match counted {
                    None => (open, 0),
                    Some(c) => {
                        let zero = c.at_most(wi, open, left(0)) & !c.at_most(wi, open, NOT_COUNTED);
                        let to_count = c.at_most(wi, open, NOT_COUNTED)
                            | zero & inexact.started_below_word(ph, w);
                        let mut lost = zero & !to_count;
                        if !self.captures_lose() {
                            lost = Bitboard(lost)
                                .filter(|x| captures_counted(w * 64 + x.0 as u64))
                                .fold(0, |m, x| m | 1 << x.0);
                        }
                        (to_count, lost)
                    }
                };
                let mut done = 0;
                if lost != 0 {
                    let fresh = b.bits.set_word(LOST, wi, lost);
                    b.bits.set_word(b.next(), wi, fresh);
                    done += fresh.count_ones() as u64;
                    open &= !lost;
                }
                // Two or more to count: the frame's moves once for all of them.
                let mut quiet = [0u8; 64];
                // How far a count goes: past what a counter holds, it is not finished.
                let most = if counted.is_some() {
                    b.most_counted()
                } else {
                    0
                };
                let by_word = to_count.count_ones() >= 2
                    && self.quiet_open_word(bits, ph, w, to_count, most, &mut quiet);
                while open != 0 {
                    let x = open.trailing_zeros() as usize;
                    open &= open - 1;
                    let pi = w * 64 + x as u64;
                    // The position only where moves are made.
                    let decoded = std::cell::OnceCell::new();
                    let pos = || *decoded.get_or_init(|| self.layout.decode_valid(ph, pi));
                    let captures_counted = || captures_counted(pi);
                    let quiet_open = || {
                        if by_word {
                            quiet[x]
                        } else {
                            self.quiet_not_lost(bits, pi, &pos(), most)
                        }
                    };
                    let lose = match counted.map(|c| (c, c.get(pi))) {
                        None => quiet_open() == 0 && self.captures_all_lose(pos, n),
                        Some((c, NOT_COUNTED)) => {
                            // Counted once it is small enough; later wins of its successors count
                            // it down.
                            let mut open = quiet_open();
                            if open <= most && captures_counted() {
                                open += self.captures_not_lost(&pos(), n, most - open);
                            }
                            if open <= most {
                                b.start_count(&c, pi, open);
                            }
                            open == 0 && (captures_counted() || self.captures_all_lose(pos, n))
                        }
                        // Started below its moves: as many moves as it was started at are known to
                        // lose; what is left is found move by move.
                        Some((c, count)) if count == left(0) && to_count >> x & 1 != 0 => {
                            let mut open = quiet_open();
                            if open <= MAX_OPEN && captures_counted() {
                                open += self.captures_not_lost(&pos(), n, MAX_OPEN - open);
                            }
                            if open > 0 {
                                c.restart(pi, left(open.min(MAX_OPEN)));
                            }
                            open == 0 && (captures_counted() || self.captures_all_lose(pos, n))
                        }
                        // Every quiet move is known to lose, counted down, and the captures too
                        // where they are counted.
                        Some((_, count)) => {
                            count == left(0)
                                && (captures_counted() || self.captures_all_lose(pos, n))
                        }
                    };
                    if lose && b.bits.set(LOST, pi) {
                        b.bits.set(b.next(), pi);
                        done += 1;
                    }
                }
                done
            },
        );
        fresh.fetch_add(done, Relaxed);
    }

    /// Calls `f` with the entry of the successor of each quiet move of `pos` (the entry `idx`);
    /// stops, once the moves of one man are done, if `f` returned false (and then returns
    /// false).
    fn quiet_entries(
        &self,
        idx: u64,
        pos: &TbPosition,
        legal: &Legality,
        succ_bits: &HalfBits,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        if self.layout.unmoves_by_squares(idx, pos) {
            for_each_quiet_set(pos, legal, |kind, from, tos| {
                // A man's successors lie all over the other half: their lines are asked for
                // together, so that the misses overlap (a queen: 27 of them).
                let mut entries = [0u64; 32];
                let mut count = 0;
                self.layout.succ_entries(idx, pos, kind, from, tos, |i| {
                    succ_bits.bits.prefetch(i);
                    entries[count] = i;
                    count += 1;
                });
                entries[..count].iter().fold(true, |go_on, &i| f(i) & go_on)
            })
        } else {
            for_each_quiet(pos, |succ, kind| {
                let (_, i) = self
                    .layout
                    .encode_move(idx, pos, succ, kind)
                    .expect("legal successor has an entry");
                f(i)
            })
        }
    }

    /// How many quiet moves of `pos` (the entry `idx`, every stabiliser 1) do not lead to a
    /// position its opponent wins, resolved no deeper than the pass (in this pass, the plane of
    /// depth n + 1 holds every later win); once past `most`, more than `most`: a count a
    /// counter cannot hold is not finished.
    fn quiet_not_lost(&self, bits: &[HalfBits; 2], idx: u64, pos: &TbPosition, most: u8) -> u8 {
        let sb = &bits[Half::of(!pos.stm) as usize];
        let next = sb.next();
        if !self.layout.no_symmetric_neighbours(pos) {
            let won = |i: u64| matches!(sb.bits.get2(WON, next, i), (true, false));
            return self.arrivals_not_lost(idx, pos, won).min(most as u32 + 1) as u8;
        }
        let mut open = 0u8;
        self.quiet_entries(idx, pos, &Legality::of(pos), sb, |i| {
            open += !matches!(sb.bits.get2(WON, next, i), (true, false)) as u8;
            open <= most
        });
        open
    }

    /// Which of the entries `on` of word `w` of half `h` have a quiet move to a loss of the
    /// other half (`sb`) resolved no deeper than the pass, found for all of them at once
    /// (`for_each_succ_word`): `pull_wins`' test. None where the word's entries go one by one.
    fn reaches_loss_word(&self, sb: &HalfBits, h: Half, w: u64, on: u64) -> Option<u64> {
        let next = sb.next();
        let mut won = 0u64;
        let by_word = self.succ_words_fetched(sb, h, w, on, |sw, sym, at, mask, _| {
            let lost = sb.bits.word(LOST, sw).load(Relaxed) & !sb.bits.word(next, sw).load(Relaxed);
            let to_loss = mask & sym.inverse().bitboard(Bitboard(lost)).0;
            match at {
                Some(at) if to_loss != 0 => won |= 1 << at.0,
                Some(_) => {}
                None => won |= to_loss,
            }
        });
        by_word.map(|_| won)
    }

    /// `quiet_not_lost` of the entries `on` of word `w` of half `h` at once, into `open`
    /// (`for_each_succ_word`): each successor word is read once for all of them. Near a long
    /// diagonal by orbit counting, as `arrivals_not_lost`: each move weighs its successor's
    /// stabiliser, and an entry that is its own mirror image has its sum halved. False, and
    /// nothing counted, where the layout has no lone last man.
    fn quiet_open_word(
        &self,
        bits: &[HalfBits; 2],
        h: Half,
        w: u64,
        on: u64,
        most: u8,
        open: &mut [u8; 64],
    ) -> bool {
        let sb = &bits[Half::of(!h.stm()) as usize];
        let next = sb.next();
        let mut counts = OrbitCounts::default();
        let by_word = self.succ_words_fetched(sb, h, w, on, |sw, sym, at, mask, mirrored| {
            let won = sb.bits.word(WON, sw).load(Relaxed) & !sb.bits.word(next, sw).load(Relaxed);
            counts.add(
                at,
                mask & !sym.inverse().bitboard(Bitboard(won)).0,
                mirrored,
            );
        });
        let Some(own_mirrored) = by_word else {
            return false;
        };
        for x in Bitboard(on).map(|x| x.index()) {
            open[x] = counts.get(x, own_mirrored).min(most as u32 + 1) as u8;
        }
        true
    }

    /// `for_each_succ_word` into the other half `sb`, each successor word's line fetched
    /// ahead: the moves are held while their lines come, as in `Reached`, then given to
    /// `f(successor word, sym, at, mask, mirrored)`. None where the layout has no lone last man.
    #[inline(always)]
    fn succ_words_fetched(
        &self,
        sb: &HalfBits,
        h: Half,
        w: u64,
        on: u64,
        mut f: impl FnMut(usize, Symmetry, Option<Square>, u64, u64),
    ) -> Option<u64> {
        let mut moves = [(0u64, Symmetry::default(), None, 0u64, 0u64); 128];
        let mut held = 0;
        let by_word = for_each_succ_word(self.layout, h, w, on, |sw, sym, at, mask, mirrored| {
            if held == moves.len() {
                moves
                    .iter()
                    .for_each(|&(sw, sym, at, mask, m)| f(sw as usize, sym, at, mask, m));
                held = 0;
            }
            sb.bits.prefetch(sw * 64);
            moves[held] = (sw, sym, at, mask, mirrored);
            held += 1;
        });
        if by_word.is_some() {
            moves[..held]
                .iter()
                .for_each(|&(sw, sym, at, mask, m)| f(sw as usize, sym, at, mask, m));
        }
        by_word
    }

    /// How many un-moves from the entries of the quiet successors of `pos` (the entry `idx`)
    /// not `won` will reach this entry: by orbit counting, as the values solver counts near a
    /// long diagonal, the sum over those moves of the successor's stabiliser, divided by the
    /// position's own. Every move is made; only about a tenth of the entries need this.
    fn arrivals_not_lost(&self, idx: u64, pos: &TbPosition, won: impl Fn(u64) -> bool) -> u32 {
        let mut open = 0;
        for_each_quiet(pos, |succ, kind| {
            let (_, i) = self
                .layout
                .encode_move(idx, pos, succ, kind)
                .expect("legal successor has an entry");
            if !won(i) {
                open += self.layout.stabiliser(succ) as u32;
            }
            true
        });
        let own = self.layout.stabiliser(pos) as u32;
        debug_assert_eq!(open % own, 0);
        open / own
    }

    /// `arrivals_not_lost` before anything is won (`precount`): no successor's entry is
    /// needed, only its stabiliser (KQRKBN's count spent a sixth of its time numbering them).
    fn arrivals(&self, pos: &TbPosition) -> u32 {
        let mut open = 0;
        for_each_quiet(pos, |succ, _| {
            open += self.layout.stabiliser(succ) as u32;
            true
        });
        let own = self.layout.stabiliser(pos) as u32;
        debug_assert_eq!(open % own, 0);
        open / own
    }

    /// Does every capture of the position `pos` gives lead to a position its opponent wins at
    /// depth n or less? Where every capture loses (DTZ), the position is not decoded.
    fn captures_all_lose(&self, pos: impl FnOnce() -> TbPosition, n: u16) -> bool {
        if self.captures_lose() {
            return true;
        }
        let pos = pos();
        !may_convert(&pos)
            || for_each_conversion(&pos, &Legality::of(&pos), |succ, class| {
                self.capture_loses(pos.stm, succ, class, n)
            })
    }

    /// How many captures of `pos` do not lead to a sub-table position its opponent wins at
    /// depth n or less (`check_candidates`' test); once past `most`, more than `most`.
    fn captures_not_lost(&self, pos: &TbPosition, n: u16, most: u8) -> u8 {
        if !may_convert(pos) {
            return 0;
        }
        let mut open = 0u8;
        for_each_conversion(pos, &Legality::of(pos), |succ, class| {
            open += !self.capture_loses(pos.stm, succ, class, n) as u8;
            open <= most
        });
        open
    }

    /// Does the capture of the side `mover` to `succ` lead to a position its opponent wins
    /// at depth n or less?
    fn capture_loses(&self, mover: Color, succ: &TbPosition, class: MoveClass, n: u16) -> bool {
        let MoveClass::Convert { captured, promoted } = class else {
            unreachable!("pawnless")
        };
        let seed = match self.metric {
            Metric::Dtm => {
                self.seed_depth(
                    self.subs
                        .value(Metric::Dtm, mover, captured, promoted, succ),
                )
            }
            _ => self.zeroing_seed(self.subs.result(mover, captured, promoted, succ)),
        };
        matches!(seed, Some((d, true)) if d <= n)
    }
}

/// Entry `pi` of half `ph` has a move to a position resolved at the pass's depth: won at
/// once if that position is lost (`to_loss`; true if newly resolved). Otherwise it is to be
/// checked (a candidate): at once in a half without counters; in one with counters when this
/// was its last move not yet known to lose, or, reached from a sub-table where the counters
/// leave captures out (`captures_lose`), when none is left.
#[inline]
fn reach(r: &Reached, ph: Half, w: u64, mask: u64, counted: bool) -> u64 {
    let b = &r.state.bits[ph as usize];
    let wi = w as usize;
    if r.to_loss {
        if r.by_capture {
            if let Some(c) = &b.capture_wins {
                c.set_word(0, wi, mask);
            }
        }
        return win_word(b, wi, mask);
    }
    let mut open =
        mask & !(b.bits.word(WON, wi).load(Relaxed) | b.bits.word(LOST, wi).load(Relaxed));
    if let Some(l) = &b.losable {
        open &= l.word(wi);
    }
    if open == 0 {
        return 0;
    }
    let last = match b.counters() {
        None => open,
        // Not counted down: the last move only if none is left open.
        Some(c) if !counted => c.at_most(wi, open, left(0)),
        Some(c) => b.count_down_word(&c, wi, open),
    };
    if last != 0 {
        r.state.cand.set_word(0, wi, last);
    }
    0
}

/// The entries `mask` of word `w` of half `b`, each with a move to a loss, are won at the
/// pass's depth + 1 but where already resolved; how many were not.
#[inline(always)]
fn win_word(b: &HalfBits, w: usize, mask: u64) -> u64 {
    let won = b
        .bits
        .set_word(WON, w, mask & !b.bits.word(LOST, w).load(Relaxed));
    if won != 0 {
        b.bits.set_word(b.next(), w, won);
    }
    won.count_ones() as u64
}

/// Entries of a chunk of `live_chunks`.
const LIVE_CHUNK: u64 = 1 << 12;

/// Chunks of `live_chunks` a task runs at most (64 Ki entries).
const LIVE_TASK_CHUNKS: usize = 16;

/// The sum of `f` over the live runs of half `h` (`Layout::live_runs`), cut into chunks of
/// `LIVE_CHUNK` entries run in parallel.
fn live_chunks(layout: &Layout, h: Half, f: impl Fn(std::ops::Range<u64>) -> u64 + Sync) -> u64 {
    const C: u64 = LIVE_CHUNK;
    let runs: Vec<_> = layout.live_runs(h).collect();
    // Small tasks, as in `Bits::marked_blocks`: the chunks' work is far from even.
    runs.par_iter()
        .with_max_len(1)
        .map(|run| {
            ((run.start / C) as usize..run.end.div_ceil(C) as usize)
                .into_par_iter()
                .with_max_len(LIVE_TASK_CHUNKS)
                .map(|c| f((c as u64 * C).max(run.start)..((c as u64 + 1) * C).min(run.end)))
                .sum::<u64>()
        })
        .sum()
}

/// The bits of a word of 64 entries from `base` that lie in `range`.
fn in_word(base: u64, range: &std::ops::Range<u64>) -> u64 {
    let lo = range.start.saturating_sub(base).min(64);
    let hi = range.end.saturating_sub(base).min(64);
    let below = |k: u64| if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
    below(hi) & !below(lo)
}

/// What decides whether a pass over half `h`'s wins pulls (`pull_wins`): its valid entries
/// and their quiet moves a position, estimated from a sample of its live entries.
struct OpenEntries {
    live: u64,
    valid: u64,
    moves: u64,
}

impl OpenEntries {
    /// Entries sampled, spread evenly over the live runs.
    const SAMPLE: u64 = 1 << 16;

    fn sample(layout: &Layout, h: Half) -> OpenEntries {
        let runs: Vec<_> = layout.live_runs(h).collect();
        let live: u64 = runs.iter().map(|r| r.end - r.start).sum();
        let step = (live / Self::SAMPLE).max(1);
        let (mut seen, mut valid, mut moves) = (0u64, 0u64, 0u64);
        let mut skip = 0;
        for run in &runs {
            let mut i = run.start + skip;
            while i < run.end {
                seen += 1;
                if let Some(pos) = layout.decode(h, i) {
                    valid += 1;
                    for_each_quiet(&pos, |_, _| {
                        moves += 1;
                        true
                    });
                }
                i += step;
            }
            skip = i - run.end;
        }
        OpenEntries {
            live,
            valid: (valid as f64 / seen.max(1) as f64 * live as f64) as u64,
            moves: moves.div_ceil(valid.max(1)).max(1),
        }
    }

    /// Does pulling take fewer moves than the push's un-moves from `losses` entries, with
    /// `resolved` of this half's entries resolved and `marked` broken ones marked won by
    /// earlier pulls? A pull reads the won and lost words of the live entries (about a move a
    /// word), makes each open valid entry's moves and decodes every open entry (valid or
    /// broken but not yet marked: a decode costs about as much as two moves); the push makes
    /// about as many un-moves from each loss as an entry here has moves.
    fn pull_costs_less(&self, resolved: u64, marked: u64, losses: u64) -> bool {
        let open_valid = self.valid.saturating_sub(resolved);
        let open = self.live.saturating_sub(resolved + marked);
        open_valid * self.moves + 2 * open + self.live / 64 < losses * self.moves
    }
}

/// How a pass finds its wins once the half has been pulled: by the words each way reads, where
/// `OpenEntries` counts entries. A pull makes the moves of the words with open entries (no more
/// than the half's last pull left open: entries only close), a push the un-moves of the
/// frontier's words with losses, each once for a word's 64 entries. Those words are estimated
/// from the frontier's losses at the density of that half's last frontier of the same parity:
/// passes alternate in kind (KQRKBN's DTZ: 20 losses a word at depth 2, 6 at depth 3, 17 at
/// depth 4). KQRKBN's passes (`gentb --pass-times`) took 0.29-0.39 µs a word pulled and
/// 0.40-0.47 µs a word pushed; by entries, DTZ pulled its third pass, 44.8 M words in 17.2 s,
/// where a push of 7.2 M words would have taken about 3 s.
#[derive(Default)]
struct PullChoice {
    /// Per half of predecessors: the words its last pull left with open entries.
    open_words: [Option<u64>; 2],
    /// Per half of the frontier and parity of the depth: losses per word with one, at the last
    /// such frontier that had any.
    density: [[Option<f64>; 2]; 2],
}

impl PullChoice {
    /// The weights of a word pulled and a word pushed, from the times above.
    const PULL: f64 = 4.0;
    const PUSH: f64 = 5.0;

    /// Does pulling the wins of the half before `h` from the `losses` of `h`'s frontier at
    /// depth `n` cost less than pushing them? None before that half's first pull, which also
    /// marks its broken entries (`pull_wins`).
    fn pull_costs_less(&self, h: Half, n: u16, losses: u64) -> Option<bool> {
        let open = self.open_words[Half::of(!h.stm()) as usize]?;
        let density = self.density[h as usize][n as usize % 2].unwrap_or(1.0);
        Some(Self::PULL * (open as f64) < Self::PUSH * losses as f64 / density)
    }

    /// What pass `n` from `h`'s frontier found: its `losses` in `loss_words` words, and the
    /// words its pull left open if it pulled.
    fn saw(&mut self, h: Half, n: u16, losses: u64, loss_words: u64, pulled: Option<u64>) {
        if loss_words > 0 {
            self.density[h as usize][n as usize % 2] = Some(losses as f64 / loss_words as f64);
        }
        if let Some(words) = pulled {
            self.open_words[Half::of(!h.stm()) as usize] = Some(words);
        }
    }
}

/// A four-bit counter per entry of a half that keeps them (`BitmapSolver::counted_halves`):
/// how many of its moves are not yet known to lose, counted before the first pass (`precount`)
/// or the first time it is checked. The counters of a group of 64 entries are the four words
/// after the group's planes (`Bits::stride`), so that an entry's bits and counter share one
/// cache line: the un-moves from a frontier reach entries all over the half, and each reach
/// of a counted entry read two lines when the counters were an array of their own. Four bits
/// are half the memory of a byte, so that KQRKBN's losing half has room for them beside its
/// bitmaps. A count above `MAX_OPEN` is kept only as `MAX_OPEN`, inexact, where the quiet
/// counts tell such entries apart (`BitmapSolver::inexact_counts`); elsewhere the entry stays
/// `NOT_COUNTED` and is checked move by move until it is small enough.
#[derive(Clone, Copy)]
struct Nibbles<'a> {
    bits: &'a Bits<4>,
}

impl Nibbles<'_> {
    #[inline(always)]
    fn at(&self, i: u64) -> (&AtomicU64, u32) {
        let k = (i % 64) as usize;
        let word = self.bits.stride * (i / 64) as usize + 4 + k / 16;
        (&self.bits.words[word], (k % 16) as u32 * 4)
    }

    #[inline(always)]
    fn get(&self, i: u64) -> u8 {
        let (w, shift) = self.at(i);
        (w.load(Relaxed) >> shift & 0xF) as u8
    }

    /// Sets the counter of an entry that is `NOT_COUNTED` (zero) to `v`. An or, not a store:
    /// other threads may be setting the other counters of the word.
    #[inline(always)]
    fn start(&self, i: u64, v: u8) {
        debug_assert!(v <= 0xF && self.get(i) == NOT_COUNTED);
        let (w, shift) = self.at(i);
        w.fetch_or((v as u64) << shift, Relaxed);
    }

    /// Starts the counters of group `w`'s entries `16 * part ..` that are `NOT_COUNTED` at the
    /// nibbles of `v` (zero where they stay so).
    #[inline(always)]
    fn start_word(&self, w: usize, part: usize, v: u64) {
        if v != 0 {
            self.counter_word(w, part).fetch_or(v, Relaxed);
        }
    }

    /// Counts the entries `mask` of group `w` down by one each, but not below `left(0)`: an
    /// inexact counter (`BitmapSolver::inexact_counts`) is reached more often than it counts,
    /// and nothing may borrow from the other counters of the word. Those that were at most
    /// `left(1)` before: at their last open move, or not counted.
    #[inline(always)]
    fn count_down_word(&self, w: usize, mask: u64) -> u64 {
        let mut last = 0;
        for part in 0..4 {
            let on = spread_nibbles(mask >> (16 * part));
            if on == 0 {
                continue;
            }
            let x = count_down_above(self.counter_word(w, part), on, left(0));
            last |= gather_nibbles(on & !nibbles_above(x, left(1))) << (16 * part);
        }
        last
    }

    /// Those of the entries `mask` of group `w` whose counters are at most `v` (up to 7).
    #[inline(always)]
    fn at_most(&self, w: usize, mask: u64, v: u8) -> u64 {
        let mut low = 0;
        for part in 0..4 {
            let on = spread_nibbles(mask >> (16 * part));
            if on != 0 {
                let x = self.counter_word(w, part).load(Relaxed);
                low |= gather_nibbles(on & !nibbles_above(x, v)) << (16 * part);
            }
        }
        low
    }

    /// The word of group `w`'s counters that holds those of its entries `16 * part ..`.
    #[inline(always)]
    fn counter_word(&self, w: usize, part: usize) -> &AtomicU64 {
        &self.bits.words[self.bits.stride * w + 4 + part]
    }

    /// Starts the counter of entry `i`, at `left(0)`, again at `v`.
    #[inline(always)]
    fn restart(&self, i: u64, v: u8) {
        debug_assert!(v <= 0xF && self.get(i) == left(0));
        let (w, shift) = self.at(i);
        w.fetch_add(((v - left(0)) as u64) << shift, Relaxed);
    }
}

/// A counter not yet started: the entry was never counted, or had more than `MAX_OPEN` moves
/// open when it was.
const NOT_COUNTED: u8 = 0;
/// The most open moves a counter holds (codes 1 to 15).
const MAX_OPEN: u8 = 14;
/// The most open moves a counter with a carry bit holds (`HalfBits::carry`).
const MAX_CARRIED: u8 = 2 * MAX_OPEN;

/// The counters a later solve starts 16 entries at from their quiet moves' codes in DTM's
/// counts, a nibble each: past `MAX_OPEN` (`NOT_COUNTED` there), inexact at `MAX_OPEN`
/// (`BitmapSolver::inexact_counts`).
#[inline(always)]
fn first_counts(x: u64) -> u64 {
    const LOW: u64 = 0x1111_1111_1111_1111;
    x | ((!nibbles_above(x, NOT_COUNTED) & LOW) * left(MAX_OPEN) as u64)
}

/// Which counters were started inexact (`BitmapSolver::inexact_counts`). Such a counter's
/// entry is checked move by move at zero and started again at what is left open. Left
/// uncounted instead, it was checked move by move at every move found to lose until few
/// enough were left, and KQRKBN's Black (king, bishop and knight) has up to 29 quiet moves: in
/// its DTM's second pass 172 M such checks against 67 M losses.
#[derive(Clone, Copy)]
enum Inexact<'r> {
    Nowhere,
    /// A later solve's: those whose quiet count in DTM's counts is past `MAX_CARRIED`, or
    /// past `MAX_OPEN` where the half's counters do not `carry`.
    PastQuiet {
        counts: &'r MoveCounts,
        carries: bool,
    },
}

impl Inexact<'_> {
    /// Which counters of word `w` of half `h` were started below their entries' moves, a bit
    /// each: such a counter's entry is counted again, move by move, at zero.
    #[inline(always)]
    fn started_below_word(&self, h: Half, w: u64) -> u64 {
        match *self {
            Inexact::Nowhere => 0,
            Inexact::PastQuiet { counts, .. } if counts.half() != h => 0,
            Inexact::PastQuiet { counts, carries } => {
                let past = (0..4).fold(0, |m, part| {
                    let counted = nibbles_above(counts.word(w, part), NOT_COUNTED);
                    m | gather_nibbles(!counted) << (16 * part)
                });
                past | if carries { 0 } else { counts.carried_word(w) }
            }
        }
    }
}

/// How many captures `pos` has (pawnless: its conversions).
fn conversions(pos: &TbPosition, legal: &Legality) -> u32 {
    let mut n = 0;
    for_each_conversion(pos, legal, |_, _| {
        n += 1;
        true
    });
    n
}

/// The quiet moves of a word's entries, counted together by orbit counting (`arrivals_not_lost`
/// for the whole word): each move weighs its successor's stabiliser, and the sum of an entry
/// that is its own mirror image is halved.
struct OrbitCounts {
    /// The lone man's own moves, per square he moves from.
    own: [u8; 64],
    /// The other men's moves, per square of the lone man.
    others: WordCounts,
}

impl Default for OrbitCounts {
    fn default() -> OrbitCounts {
        OrbitCounts {
            own: [0; 64],
            others: WordCounts::default(),
        }
    }
}

impl OrbitCounts {
    /// The moves `mask` of the lone man from `at`, or (`at` None) one move of another man with
    /// the lone man on each square of `mask`; `mirrored` where the successor is its own mirror
    /// image.
    #[inline(always)]
    fn add(&mut self, at: Option<Square>, mask: u64, mirrored: u64) {
        let twice = mask & mirrored;
        match at {
            Some(at) => self.own[at.index()] += (mask.count_ones() + twice.count_ones()) as u8,
            None => {
                self.others.add(mask);
                if twice != 0 {
                    self.others.add(twice);
                }
            }
        }
    }

    /// Entry `x`'s count, `own_mirrored` the word's entries that are their own mirror image.
    #[inline(always)]
    fn get(&self, x: usize, own_mirrored: u64) -> u32 {
        let sum = self.own[x] as u32 + self.others.get(x);
        let own = 1 + (own_mirrored >> x & 1) as u32;
        debug_assert_eq!(sum % own, 0);
        sum / own
    }
}

/// A count per entry of a word, up to 255, held bit-sliced: bit k of entry x's count is bit x
/// of word k, so that one move's mask of entries is added to all of them with a few word
/// operations.
#[derive(Default)]
struct WordCounts([u64; 8]);

impl WordCounts {
    /// One more for each entry of `mask`.
    #[inline(always)]
    fn add(&mut self, mask: u64) {
        let mut carry = mask;
        for s in self.0.iter_mut() {
            if carry == 0 {
                break;
            }
            (*s, carry) = (*s ^ carry, *s & carry);
        }
    }

    /// Entry `x`'s count.
    #[inline(always)]
    fn get(&self, x: usize) -> u32 {
        (0..self.0.len()).fold(0, |c, k| c | ((self.0[k] >> x & 1) as u32) << k)
    }
}

/// The low 16 bits of `m`, one a nibble: bit k to bit 4k.
#[inline(always)]
fn spread_nibbles(m: u64) -> u64 {
    let x = m & 0xFFFF;
    let x = (x | x << 24) & 0x0000_00FF_0000_00FF;
    let x = (x | x << 12) & 0x000F_000F_000F_000F;
    let x = (x | x << 6) & 0x0303_0303_0303_0303;
    (x | x << 3) & 0x1111_1111_1111_1111
}

/// `spread_nibbles` undone: each nibble's low bit, bit 4k to bit k.
#[inline(always)]
fn gather_nibbles(x: u64) -> u64 {
    let x = x & 0x1111_1111_1111_1111;
    let x = (x | x >> 3) & 0x0303_0303_0303_0303;
    let x = (x | x >> 6) & 0x000F_000F_000F_000F;
    let x = (x | x >> 12) & 0x0000_00FF_0000_00FF;
    (x | x >> 24) & 0xFFFF
}

/// A nibble's low bit for each nibble of `x` above `v` (up to 7): its sum with 7 - v (no
/// carry leaves a nibble) has its high bit set, or it had it already.
#[inline(always)]
fn nibbles_above(x: u64, v: u8) -> u64 {
    const HIGH: u64 = 0x8888_8888_8888_8888;
    debug_assert!(v <= 7);
    let add = 0x1111_1111_1111_1111 * (7 - v as u64);
    ((((x & !HIGH) + add) | x) & HIGH) >> 3
}

/// Counts down by one each nibble of `word` that is set in `on` (a nibble's low bit) and
/// above `floor` (up to 7), in one exchange; returns the word as it was just before. No
/// nibble borrows: each one counted down holds more than the floor.
#[inline(always)]
fn count_down_above(word: &AtomicU64, on: u64, floor: u8) -> u64 {
    let mut x = word.load(Relaxed);
    loop {
        let down = on & nibbles_above(x, floor);
        if down == 0 {
            return x;
        }
        match word.compare_exchange_weak(x, x - down, Relaxed, Relaxed) {
            Ok(_) => return x,
            Err(now) => x = now,
        }
    }
}

/// The counter of an entry with `n` moves not yet known to lose.
#[inline(always)]
fn left(n: u8) -> u8 {
    n + 1
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
type SegmentValues = (Option<(Half, u64)>, Vec<u16>);

/// One king block's values of every part (`assemble`), and what putting them together needs.
struct BlockValues {
    /// Part p's values are the p-th of `parts` equal slices.
    values: Vec<TbValue>,
    /// The raw file values of a run of the layout, part after part.
    raw: Vec<u16>,
    /// Per part, the raw file values of the last log segment read, and which (half, segment) it
    /// was: a segment holds many king runs of a small endgame (KQKR: 256), and is read once for
    /// all.
    segments: Vec<SegmentValues>,
    scratch: LogScratch,
    frames: FrameCache,
}

impl BlockValues {
    fn new() -> io::Result<BlockValues> {
        Ok(BlockValues {
            values: Vec::new(),
            raw: Vec::new(),
            segments: Vec::new(),
            scratch: LogScratch::new()?,
            frames: FrameCache::default(),
        })
    }

    /// The values of the Nalimov entries `block` of half `h`, from the layout's `runs`.
    fn fill(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The solve of every pawnless six-man endgame fits in the 16 GiB of anonymous memory a
    /// build may take, the largest (four different men) with room to spare.
    #[test]
    fn every_pawnless_six_man_solve_fits_in_16_gib() {
        let six: Vec<Material> = Material::all_up_to(6)
            .into_iter()
            .filter(|m| m.men() == 6 && !m.has_pawns())
            .collect();
        // 35 of four men against the bare king, 80 of three against one, 55 of two against two.
        assert_eq!(six.len(), 170);
        let (most, largest) = six
            .iter()
            .map(|m| {
                let index = crate::egtb::index::EndgameIndex::new(m);
                (memory_bytes(&Layout::new(&index), m), m.to_string())
            })
            .max()
            .expect("endgames");
        assert!(most <= 16 << 30, "{largest}: {} MiB", most >> 20);
        assert!(most >= 8 << 30, "{largest}: {} MiB", most >> 20);
        // The largest endgame of two against two still has room for the counters of its
        // losing half (Black to move).
        let kqrkbn = Material::parse("KQRKBN").unwrap();
        let index = crate::egtb::index::EndgameIndex::new(&kqrkbn);
        let layout = Layout::new(&index);
        let solve = memory_bytes(&layout, &kqrkbn);
        let counters = touched_bytes(&layout, Half::Btm, 4);
        assert!(
            solve + counters <= MEMORY_CAP && solve + 2 * counters > MEMORY_CAP,
            "{} + {} MiB",
            solve >> 20,
            counters >> 20
        );
        // In its DTZ, White's 82,840 losses are kept as words (`Losable`), and Black's
        // counters carry in the bit an entry that leaves free.
        assert!(Losable::sparse_fits(&layout, Half::Wtm, 82_840));
        let freed = touched_bytes(&layout, Half::Wtm, 1);
        let carry = touched_bytes(&layout, Half::Btm, 1);
        assert!(solve + counters + carry - freed <= MEMORY_CAP);
    }

    /// A bitmap over a half touches only the pages of its live king placements: about 70% of
    /// KQRKBN's layout, whose king placements each span whole huge pages; the runs are in
    /// order, and every valid entry lies in one.
    #[test]
    fn live_runs_hold_every_valid_entry() {
        let kqrkbn = Material::parse("KQRKBN").unwrap();
        let index = crate::egtb::index::EndgameIndex::new(&kqrkbn);
        let layout = Layout::new(&index);
        let full = layout.size(Half::Wtm).div_ceil(8);
        let touched = touched_bytes(&layout, Half::Wtm, 1);
        assert!(
            touched * 10 > full * 6 && touched * 10 < full * 8,
            "{touched} of {full}"
        );
        let krk = Material::parse("KRKN").unwrap();
        let index = crate::egtb::index::EndgameIndex::new(&krk);
        let layout = Layout::new(&index);
        for h in Half::BOTH {
            let runs: Vec<_> = layout.live_runs(h).collect();
            assert!(runs.windows(2).all(|w| w[0].end <= w[1].start));
            let mut valid = 0;
            layout.scan(
                h,
                0..layout.size(h),
                &mut |idx: u64, pos: Option<&TbPosition>| {
                    if pos.is_some() {
                        valid += 1;
                        assert!(runs.iter().any(|r| r.contains(&idx)), "{h:?} {idx}");
                    }
                },
            );
            assert!(valid > 0);
        }
    }

    /// A set of losable entries reads the same kept as words as in a bitmap: word by word
    /// (inside and outside the blocks that hold one) and walked whole.
    #[test]
    fn sparse_losable_reads_as_the_bitmap() {
        let entries = 5 * BLOCK_WORDS as u64 * 64 * 64 + 1000;
        let set = [0u64, 1, 63, 64, 40_000, 32_768 * 7 + 5, entries - 1];
        let dense = Bits::<1>::new(entries).unwrap();
        let mut words = std::collections::BTreeMap::new();
        for &i in &set {
            dense.set(0, i);
            *words.entry(i / 64).or_insert(0u64) |= 1 << (i % 64);
        }
        let dense = Losable::Dense(dense);
        let sparse = Losable::from_words(entries, words.into_iter().rev().collect());
        for w in (0..entries.div_ceil(64) as usize)
            .step_by(97)
            .chain(set.map(|i| i as usize / 64))
        {
            assert_eq!(sparse.word(w), dense.word(w), "word {w}");
        }
        let walked = |l: &Losable| {
            let found = std::sync::Mutex::new(Vec::new());
            l.for_each_word(|w, m| found.lock().unwrap().push((w, m)));
            let mut found = found.into_inner().unwrap();
            found.sort_unstable();
            found
        };
        assert_eq!(walked(&sparse), walked(&dense));
        assert_eq!(walked(&sparse).len(), 5);
    }

    /// The counters started below their moves are those past what a counter holds: a quiet
    /// count past `MAX_CARRIED` in DTM's file, and past `MAX_OPEN` where the half does not
    /// carry; in the half the counts are of only.
    #[test]
    fn inexact_counters_are_those_past_what_a_counter_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counts");
        let entries = 200u64;
        let quiet = |i: u64| (i % 31) as u8;
        let writer = CountsWriter::create(&path, Half::Btm, entries).unwrap();
        let mut bytes = vec![0u8; entries.div_ceil(2) as usize];
        let mut carried = vec![0u64; entries.div_ceil(64) as usize];
        for i in 0..entries {
            let (nib, carries) = match quiet(i) {
                q @ 0..=MAX_OPEN => (left(q), false),
                q @ ..=MAX_CARRIED => (left(q - MAX_OPEN), true),
                _ => (NOT_COUNTED, false),
            };
            bytes[(i / 2) as usize] |= nib << (4 * (i % 2));
            carried[(i / 64) as usize] |= (carries as u64) << (i % 64);
        }
        writer.write(0, &bytes).unwrap();
        writer.write_carries(0..entries, &carried).unwrap();
        let counts = writer.finish().unwrap();
        for carries in [true, false] {
            let inexact = Inexact::PastQuiet {
                counts: &counts,
                carries,
            };
            let most = if carries { MAX_CARRIED } else { MAX_OPEN };
            for w in 0..entries.div_ceil(64) {
                let inside = (0..64)
                    .filter(|x| w * 64 + x < entries)
                    .fold(0u64, |m, x| m | 1 << x);
                let want = (0..64)
                    .filter(|&x| w * 64 + x < entries && quiet(w * 64 + x) > most)
                    .fold(0u64, |m, x| m | 1 << x);
                let got = inexact.started_below_word(Half::Btm, w) & inside;
                assert_eq!(got, want, "word {w}, carries {carries}");
                assert_eq!(inexact.started_below_word(Half::Wtm, w), 0);
            }
        }
    }

    /// `first_counts` starts every nibble where one count would: a count as it is, none
    /// (`NOT_COUNTED`) inexact at `MAX_OPEN`.
    #[test]
    fn first_counts_start_each_nibble_alone() {
        for seed in [
            0u64,
            0x0123_4567_89AB_CDEF,
            0xF0F0_0000_1234_0001,
            0x1000_0000_0000_0001,
        ] {
            let got = first_counts(seed);
            for k in 0..16 {
                let v = (seed >> (4 * k) & 0xF) as u8;
                let want = if v == NOT_COUNTED { left(MAX_OPEN) } else { v };
                assert_eq!((got >> (4 * k) & 0xF) as u8, want, "{seed:#x} nibble {k}");
            }
        }
    }

    /// `in_word` keeps exactly the entries of a word that lie in the range, at both ends.
    #[test]
    fn in_word_masks_a_word_by_the_range() {
        for (start, end) in [
            (0, 64),
            (3, 64),
            (0, 5),
            (10, 20),
            (64, 128),
            (70, 300),
            (0, 0),
        ] {
            for base in [0u64, 64, 128] {
                let want = (0..64)
                    .filter(|&b| (start..end).contains(&(base + b)))
                    .fold(0u64, |m, b| m | 1 << b);
                assert_eq!(in_word(base, &(start..end)), want, "{base} {start}..{end}");
            }
        }
    }

    /// A drain calls back every set bit of its plane once, in any block, and leaves that plane
    /// and its summary clear and the other planes as they were; `may_hold` answers by the
    /// blocks of its plane.
    #[test]
    fn drain_finds_every_bit_of_its_plane_through_the_summary() {
        let entries = 3 * BLOCK_WORDS as u64 * 64 + 100;
        let bits = Bits::<4>::new(entries).unwrap();
        let set = [0, 63, 64, 32_767, 32_768, 60_000, entries - 1];
        for &i in &set {
            assert!(bits.set(2, i));
            assert!(!bits.set(2, i), "set twice");
        }
        let other = [1, 64, 2 * BLOCK_WORDS as u64 * 64 + 5];
        for &i in &other {
            assert!(bits.set(1, i));
        }
        let plane = bits.plane(2);
        assert!(plane.may_hold(0..1));
        assert!(!plane.may_hold(2 * BLOCK_WORDS..2 * BLOCK_WORDS + 10));
        assert!(bits
            .plane(1)
            .may_hold(2 * BLOCK_WORDS..2 * BLOCK_WORDS + 10));
        assert!(plane.may_hold(3 * BLOCK_WORDS..plane.word_count()));
        assert!(!bits.plane(3).may_hold(0..plane.word_count()));
        assert_eq!(bits.get2(1, 2, 64), (true, true));
        assert_eq!(bits.get2(1, 2, 63), (false, true));
        let seen = std::sync::Mutex::new(Vec::new());
        let n = bits.drain_words(
            2,
            || (),
            |_, w, word| {
                for s in Bitboard(word) {
                    seen.lock().unwrap().push(w as u64 * 64 + s.0 as u64);
                }
                word.count_ones() as u64
            },
        );
        assert_eq!(n, set.len() as u64);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, set);
        assert!((0..plane.word_count()).all(|w| plane.word(w) == 0));
        assert!(!plane.may_hold(0..plane.word_count()));
        assert_eq!(bits.drain_words(2, || (), |_, _, _| 1), 0);
        let kept: Vec<u64> = (0..entries)
            .filter(|&i| bits.plane(1).word((i / 64) as usize) >> (i % 64) & 1 != 0)
            .collect();
        assert_eq!(kept, other);
    }

    /// Counting a word's counters down at once does to each what counting it down alone
    /// would: every counter value, every pattern of entries reached, and the entries found at
    /// their last move are those at most `left(1)` before (`at_most`: at most `v`).
    #[test]
    fn counters_count_down_a_word_as_one_by_one() {
        let half = HalfBits::new(4 * 64, true).unwrap();
        let c = half.counters().unwrap();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..2_000 {
            let w = round % 4;
            let before: Vec<u8> = (0..64)
                .map(|k| {
                    let i = w as u64 * 64 + k;
                    let v = (next() % 16) as u8;
                    // Set from scratch: `start` ors into a cleared counter.
                    let (word, shift) = c.at(i);
                    word.fetch_and(!(0xF << shift), Relaxed);
                    if v != NOT_COUNTED {
                        c.start(i, v);
                    }
                    assert_eq!(c.get(i), v);
                    v
                })
                .collect();
            let mask = next() & next();
            for v in 0..=7 {
                let low = (0..64)
                    .filter(|&k| mask >> k & 1 != 0 && before[k] <= v)
                    .fold(0u64, |m, k| m | 1 << k);
                assert_eq!(c.at_most(w, mask, v), low, "at most {v}");
            }
            let last = (0..64)
                .filter(|&k| mask >> k & 1 != 0 && before[k] <= left(1))
                .fold(0u64, |m, k| m | 1 << k);
            assert_eq!(c.count_down_word(w, mask), last);
            for (k, &v) in before.iter().enumerate() {
                let reached = mask >> k & 1 != 0 && v > left(0);
                let after = v - reached as u8;
                assert_eq!(c.get(w as u64 * 64 + k as u64), after, "entry {k}");
            }
        }
    }

    /// A carrying counter holds every count up to `MAX_CARRIED` exactly: counted down a move
    /// at a time, with the other counters of its word counted down beside it on two threads,
    /// it is found at its last move after exactly as many moves as it was started at, with its
    /// carry taken on the way where it had one. Counted again with fewer moves, it carries no
    /// more.
    #[test]
    fn a_carrying_counter_counts_every_move() {
        let mut half = HalfBits::new(64, true).unwrap();
        half.carry = Some(Carry::new(64).unwrap());
        let c = half.counters().unwrap();
        let carries = |i: u64| half.carry.as_ref().unwrap().word(i).load(Relaxed) >> i & 1 != 0;
        for open in 1..=MAX_CARRIED {
            for i in 0..16 {
                half.start_count(&c, i, open);
                assert_eq!(carries(i), open > MAX_OPEN, "{open} open");
            }
            // Each thread counts its own 8 entries down, in the same counter word.
            let lasts: Vec<Vec<u32>> = std::thread::scope(|s| {
                let threads: Vec<_> = [0x00FFu64, 0xFF00]
                    .map(|mine| {
                        let (half, c) = (&half, c);
                        s.spawn(move || {
                            (1..=open as u32 + 1)
                                .filter(|_| half.count_down_word(&c, 0, mine) != 0)
                                .collect::<Vec<u32>>()
                        })
                    })
                    .into_iter()
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).collect()
            });
            // Its last move, then zero again with nothing left to count down.
            for l in lasts {
                assert_eq!(l, vec![open as u32, open as u32 + 1], "{open} open");
            }
            for i in 0..16 {
                assert_eq!(c.get(i), left(0), "{open} open");
                assert!(!carries(i));
                let (word, shift) = c.at(i);
                word.fetch_and(!(0xF << shift), Relaxed);
            }
        }
        half.start_count(&c, 3, MAX_CARRIED);
        let (word, shift) = c.at(3);
        word.fetch_and(!(0xF << shift), Relaxed);
        half.start_count(&c, 3, 5);
        assert!(!carries(3));
        assert_eq!(c.get(3), left(5));
    }
}
