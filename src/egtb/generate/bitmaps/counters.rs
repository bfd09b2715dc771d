//! Counters, four bits an entry in the line of its bits: an entry's moves not yet known to lose,
//! counted once (before the first pass where that costs less: `precount`; else at its first
//! check), then counted down by each win of a successor, the entry lost at zero without a
//! check. Near a long diagonal, where a successor may be its own mirror image, moves are
//! counted by orbit counting (`OrbitCounts`); a word's 64 counters are counted down at once
//! (`WordCounts`).

use super::*;

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
pub(super) struct Nibbles<'a> {
    pub(super) bits: &'a Bits<4>,
}

impl Nibbles<'_> {
    #[inline(always)]
    pub(super) fn at(&self, i: u64) -> (&AtomicU64, u32) {
        let k = (i % 64) as usize;
        let word = self.bits.stride * (i / 64) as usize + 4 + k / 16;
        (&self.bits.words[word], (k % 16) as u32 * 4)
    }

    #[inline(always)]
    pub(super) fn get(&self, i: u64) -> u8 {
        let (w, shift) = self.at(i);
        (w.load(Relaxed) >> shift & 0xF) as u8
    }

    /// Sets the counter of an entry that is `NOT_COUNTED` (zero) to `v`. An or, not a store:
    /// other threads may be setting the other counters of the word.
    #[inline(always)]
    pub(super) fn start(&self, i: u64, v: u8) {
        debug_assert!(v <= 0xF && self.get(i) == NOT_COUNTED);
        let (w, shift) = self.at(i);
        w.fetch_or((v as u64) << shift, Relaxed);
    }

    /// Starts the counters of group `w`'s entries `16 * part ..` that are `NOT_COUNTED` at the
    /// nibbles of `v` (zero where they stay so).
    #[inline(always)]
    pub(super) fn start_word(&self, w: usize, part: usize, v: u64) {
        if v != 0 {
            self.counter_word(w, part).fetch_or(v, Relaxed);
        }
    }

    /// Counts the entries `mask` of group `w` down by one each, but not below `left(0)`: an
    /// inexact counter (`BitmapSolver::inexact_counts`) is reached more often than it counts,
    /// and nothing may borrow from the other counters of the word. Those that were at most
    /// `left(1)` before: at their last open move, or not counted.
    #[inline(always)]
    pub(super) fn count_down_word(&self, w: usize, mask: u64) -> u64 {
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
    pub(super) fn at_most(&self, w: usize, mask: u64, v: u8) -> u64 {
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
    pub(super) fn counter_word(&self, w: usize, part: usize) -> &AtomicU64 {
        &self.bits.words[self.bits.stride * w + 4 + part]
    }

    /// Starts the counter of entry `i`, at `left(0)`, again at `v`.
    #[inline(always)]
    pub(super) fn restart(&self, i: u64, v: u8) {
        debug_assert!(v <= 0xF && self.get(i) == left(0));
        let (w, shift) = self.at(i);
        w.fetch_add(((v - left(0)) as u64) << shift, Relaxed);
    }
}

/// A counter not yet started: the entry was never counted, or had more than `MAX_OPEN` moves
/// open when it was.
pub(super) const NOT_COUNTED: u8 = 0;

/// The most open moves a counter holds (codes 1 to 15).
pub(super) const MAX_OPEN: u8 = 14;

/// The most open moves a counter with a carry bit holds (`HalfBits::carry`).
pub(super) const MAX_CARRIED: u8 = 2 * MAX_OPEN;

/// The counters a later solve starts 16 entries at from their quiet moves' codes in DTM's
/// counts, a nibble each: past `MAX_OPEN` (`NOT_COUNTED` there), inexact at `MAX_OPEN`
/// (`BitmapSolver::inexact_counts`).
#[inline(always)]
pub(super) fn first_counts(x: u64) -> u64 {
    const LOW: u64 = 0x1111_1111_1111_1111;
    x | ((!nibbles_above(x, NOT_COUNTED) & LOW) * left(MAX_OPEN) as u64)
}

/// Which counters were started inexact (`BitmapSolver::inexact_counts`). Such a counter's
/// entry is checked move by move at zero and started again at what is left open. Left
/// uncounted instead, it was checked move by move at every move found to lose until few
/// enough were left, and KQRKBN's Black (king, bishop and knight) has up to 29 quiet moves: in
/// its DTM's second pass 172 M such checks against 67 M losses.
#[derive(Clone, Copy)]
pub(super) enum Inexact<'r> {
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
    pub(super) fn started_below_word(&self, h: Half, w: u64) -> u64 {
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
pub(super) fn conversions(pos: &TbPosition, legal: &Legality) -> u32 {
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
pub(super) struct OrbitCounts {
    /// The lone man's own moves, per square he moves from.
    pub(super) own: [u8; 64],
    /// The other men's moves, per square of the lone man.
    pub(super) others: WordCounts,
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
    pub(super) fn add(&mut self, at: Option<Square>, mask: u64, mirrored: u64) {
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
    pub(super) fn get(&self, x: usize, own_mirrored: u64) -> u32 {
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
pub(super) struct WordCounts([u64; 8]);

impl WordCounts {
    /// One more for each entry of `mask`.
    #[inline(always)]
    pub(super) fn add(&mut self, mask: u64) {
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
    pub(super) fn get(&self, x: usize) -> u32 {
        (0..self.0.len()).fold(0, |c, k| c | ((self.0[k] >> x & 1) as u32) << k)
    }
}

/// The low 16 bits of `m`, one a nibble: bit k to bit 4k.
#[inline(always)]
pub(super) fn spread_nibbles(m: u64) -> u64 {
    let x = m & 0xFFFF;
    let x = (x | x << 24) & 0x0000_00FF_0000_00FF;
    let x = (x | x << 12) & 0x000F_000F_000F_000F;
    let x = (x | x << 6) & 0x0303_0303_0303_0303;
    (x | x << 3) & 0x1111_1111_1111_1111
}

/// `spread_nibbles` undone: each nibble's low bit, bit 4k to bit k.
#[inline(always)]
pub(super) fn gather_nibbles(x: u64) -> u64 {
    let x = x & 0x1111_1111_1111_1111;
    let x = (x | x >> 3) & 0x0303_0303_0303_0303;
    let x = (x | x >> 6) & 0x000F_000F_000F_000F;
    let x = (x | x >> 12) & 0x0000_00FF_0000_00FF;
    (x | x >> 24) & 0xFFFF
}

/// A nibble's low bit for each nibble of `x` above `v` (up to 7): its sum with 7 - v (no
/// carry leaves a nibble) has its high bit set, or it had it already.
#[inline(always)]
pub(super) fn nibbles_above(x: u64, v: u8) -> u64 {
    const HIGH: u64 = 0x8888_8888_8888_8888;
    debug_assert!(v <= 7);
    let add = 0x1111_1111_1111_1111 * (7 - v as u64);
    ((((x & !HIGH) + add) | x) & HIGH) >> 3
}

/// Counts down by one each nibble of `word` that is set in `on` (a nibble's low bit) and
/// above `floor` (up to 7), in one exchange; returns the word as it was just before. No
/// nibble borrows: each one counted down holds more than the floor.
#[inline(always)]
pub(super) fn count_down_above(word: &AtomicU64, on: u64, floor: u8) -> u64 {
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
pub(super) fn left(n: u8) -> u8 {
    n + 1
}

impl BitmapSolver<'_> {
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
    pub(super) fn precount(
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
    pub(super) fn count_word(&self, h: Half, w: u64, mut put: impl FnMut(u64, (u32, u32))) -> bool {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
