//! The state of one half during a solve: four bits an entry (won, lost, and the frontiers of
//! depths n and n + 1, which swap roles after each pass), the counters where the memory holds
//! them with a carry bit for the half that counts past 14 (`Carry`), and, in a later solve, the
//! entries the first one lost (`Losable`), the only ones that can be lost.

use super::*;

/// The planes of a half during a solve: won, lost, and the frontiers of the pass (resolved at
/// depth n, and at n + 1), which swap roles after each pass.
pub(super) struct HalfBits {
    pub(super) bits: Bits<4>,
    /// The plane of depth n: `FRONTIERS[0]` or `FRONTIERS[1]`.
    pub(super) now: usize,
    /// The entries that can be lost (`BitmapSolver::earlier`); all, if not known.
    pub(super) losable: Option<Losable>,
    /// A second digit of the counters, in DTM's counted half that loses most (`precount`):
    /// set where the counter holds the entry's open moves less `MAX_OPEN`, so that counts up
    /// to `MAX_CARRIED` are exact (`HalfBits::count_down_word`). It takes the bit an entry
    /// that the later solves give `losable`.
    pub(super) carry: Option<Carry>,
    /// In DTM's other halves, in that same bit: the entries with a capture to a position the
    /// opponent loses, which the later solves win at their first pass from DTM's log instead
    /// of un-capturing every such position again (`BitmapSolver::reads_capture_wins`).
    pub(super) capture_wins: Option<Bits<1>>,
}

/// The entries of a half that can be lost in a later solve: DTM's losses, one bit an entry,
/// or, where they are few, their words in order. KQRKBN's White lost 82,840 of its 5.7 G
/// entries: 924 MiB of bitmap (the pages it touches) for at most 1.3 MB of words, room that
/// Black's counters carry in (`BitmapSolver::counted_halves`).
pub(super) enum Losable {
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
    pub(super) fn sparse_fits(layout: &Layout, h: Half, lost: u64) -> bool {
        lost.saturating_mul(16) <= touched_bytes(layout, h, 1) / 16
    }

    /// The half's losses from `earlier`'s log.
    pub(super) fn read(layout: &Layout, h: Half, earlier: &Resolved) -> Result<Losable, GenError> {
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
    pub(super) fn from_words(entries: u64, mut words: Vec<(u64, u64)>) -> Losable {
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
    pub(super) fn word(&self, w: usize) -> u64 {
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
    pub(super) fn prefetch(&self, i: u64) {
        if let Losable::Dense(bits) = self {
            bits.prefetch(i);
        }
    }

    /// Calls `f(w, bits)` for every word `w` that holds a losable entry (in parallel).
    pub(super) fn for_each_word(&self, f: impl Fn(usize, u64) + Sync) {
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
pub(super) struct Carry {
    pub(super) bits: Bits<1>,
    /// Spin locks, one for many counter words (`Carry::STRIPES`).
    pub(super) locks: Vec<AtomicBool>,
}

impl Carry {
    pub(super) const STRIPES: usize = 1 << 12;

    pub(super) fn new(entries: u64) -> Result<Carry, OutOfMemory> {
        Ok(Carry {
            bits: Bits::new(entries)?,
            locks: (0..Self::STRIPES).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    #[inline(always)]
    pub(super) fn word(&self, i: u64) -> &AtomicU64 {
        self.bits.word(0, (i / 64) as usize)
    }

    /// Runs `f` holding the lock of group `w`'s counters.
    #[inline(always)]
    pub(super) fn locked<T>(&self, w: usize, f: impl FnOnce() -> T) -> T {
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

pub(super) const WON: usize = 0;

pub(super) const LOST: usize = 1;

pub(super) const FRONTIERS: [usize; 2] = [2, 3];

impl HalfBits {
    /// The planes of a half of `entries`, with an un-move counter per entry if `counted`.
    pub(super) fn new(entries: u64, counted: bool) -> Result<HalfBits, OutOfMemory> {
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
    pub(super) fn counters(&self) -> Option<Nibbles<'_>> {
        (self.bits.stride > 4).then_some(Nibbles { bits: &self.bits })
    }

    /// The plane of depth n + 1.
    pub(super) fn next(&self) -> usize {
        FRONTIERS[0] + FRONTIERS[1] - self.now
    }

    /// The most open moves a counter of this half holds exactly.
    pub(super) fn most_counted(&self) -> u8 {
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
    pub(super) fn start_count(&self, c: &Nibbles, i: u64, open: u8) {
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
    pub(super) fn count_down_word(&self, c: &Nibbles, w: usize, mask: u64) -> u64 {
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
pub(super) struct PassState {
    pub(super) bits: [HalfBits; 2],
    pub(super) cand: Bits<1>,
    /// Do the counters count captures too (`BitmapSolver::counts_captures`)?
    pub(super) counts_captures: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

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
