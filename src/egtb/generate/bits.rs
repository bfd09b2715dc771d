//! Bitmaps for the solvers: `P` planes of one bit an entry, interleaved by word so that an
//! entry's bits share a cache line, each plane with a summary bit a block so that a pass reads
//! only the blocks that hold something (`Bits`), and a plane's words seen one at a time
//! (`Plane`), as the depth log writes them.

use crate::chess::Bitboard;
use crate::memory::{try_vec, HugeArray, OutOfMemory};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
    pub(super) words: HugeArray<AtomicU64>,
    /// Words of a group: the `P` planes', and after them, in a half that keeps un-move
    /// counters, the counters of the group's 64 entries (`Nibbles`).
    pub(super) stride: usize,
    /// Words of one plane.
    pub(super) plane_words: usize,
    /// Plane p's summary words are `blocks[p * summary..(p + 1) * summary]`. Invariant: every
    /// block with a bit set has its summary bit set.
    pub(super) blocks: Vec<AtomicU64>,
    pub(super) summary: usize,
}

/// Words of a plane one summary bit stands for (32,768 entries): a task's share of a drain.
pub(super) const BLOCK_WORDS: usize = 512;

impl<const P: usize> Bits<P> {
    pub(super) fn new(entries: u64) -> Result<Bits<P>, OutOfMemory> {
        Self::with_stride(entries, P)
    }

    /// Planes with `stride - P` words of something else after each group.
    pub(super) fn with_stride(entries: u64, stride: usize) -> Result<Bits<P>, OutOfMemory> {
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
    pub(super) fn word(&self, plane: usize, w: usize) -> &AtomicU64 {
        &self.words[self.stride * w + plane]
    }

    #[inline(always)]
    pub(super) fn flags(&self, plane: usize, block: usize) -> (&AtomicU64, u64) {
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
    pub(super) fn get2(&self, a: usize, b: usize, i: u64) -> (bool, bool) {
        let w = (i / 64) as usize;
        let m = 1u64 << (i % 64);
        (
            self.word(a, w).load(Relaxed) & m != 0,
            self.word(b, w).load(Relaxed) & m != 0,
        )
    }

    /// Asks for the cache line of entry `i`'s bits (all planes), to be read soon.
    #[inline(always)]
    pub(super) fn prefetch(&self, i: u64) {
        prefetch(&self.words[self.stride * (i / 64) as usize]);
    }

    /// Sets bit `i` of `plane`; true if it was clear.
    #[inline(always)]
    pub(super) fn set(&self, plane: usize, i: u64) -> bool {
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
    pub(super) fn set_word(&self, plane: usize, w: usize, mask: u64) -> u64 {
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
    pub(super) fn marked_blocks(
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
    pub(super) fn drain_words<S>(
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
pub(super) fn prefetch<T>(x: &T) {
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

/// One plane of a `Bits`, read word by word (`depth_log`).
#[derive(Clone, Copy)]
pub struct Plane<'a, const P: usize> {
    pub(super) bits: &'a Bits<P>,
    pub(super) plane: usize,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
