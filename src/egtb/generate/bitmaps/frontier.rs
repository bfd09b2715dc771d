//! Pushing a pass's frontier: the un-moves from each entry the other half lost at depth n win
//! their predecessors at n + 1, and those from each win make candidates for the forward check
//! or count their counters down; the entries reached are fetched ahead (`Reached`) before they
//! are touched.

use super::*;

/// Entries reached from one position, held while their cache lines are fetched
/// (`prefetch`); `reach` is then run on them in order. Made once per task, used for one
/// position after another.
pub(super) struct Reached<'a> {
    pub(super) state: &'a PassState,
    /// Do the entries held reach a loss?
    pub(super) to_loss: bool,
    /// Do they reach it by a capture, to be recorded in `HalfBits::capture_wins`?
    pub(super) by_capture: bool,
    /// Each word and the entries of it reached (one move each), and whether their counters
    /// count that move.
    pub(super) entries: [(Half, u64, u64, bool); REACHED],
    pub(super) count: usize,
}

/// More than the predecessors of any pawnless position of six men (four men of the side
/// that moved: at most 8 + 4 * 27); a larger set (a word's) is handled in turns.
pub(super) const REACHED: usize = 128;

impl<'a> Reached<'a> {
    pub(super) fn new(state: &'a PassState) -> Reached<'a> {
        Reached {
            state,
            to_loss: false,
            by_capture: false,
            entries: [(Half::Wtm, 0, 0, true); REACHED],
            count: 0,
        }
    }

    /// The entries pushed next reach a loss (`to_loss`) or a win.
    pub(super) fn start(&mut self, to_loss: bool) {
        debug_assert_eq!(self.count, 0, "flushed");
        self.to_loss = to_loss;
        self.by_capture = false;
    }

    /// The entries pushed next reach a loss or a win by a capture (`start`).
    pub(super) fn start_captures(&mut self, to_loss: bool) {
        self.start(to_loss);
        self.by_capture = true;
    }

    /// Entry `i` of half `h` is reached, by a move its counter counts or not (`counted`): its
    /// lines are asked for now, `reach` runs later.
    #[inline(always)]
    pub(super) fn push(&mut self, h: Half, i: u64, counted: bool) -> u64 {
        self.push_word(h, i / 64, 1 << (i % 64), counted)
    }

    /// The entries `mask` of word `w` of half `h` are reached, one move each: `push` for a
    /// word at once.
    #[inline(always)]
    pub(super) fn push_word(&mut self, h: Half, w: u64, mask: u64, counted: bool) -> u64 {
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
    pub(super) fn flush(&mut self) -> u64 {
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
pub(super) struct TaskCount<'a> {
    pub(super) n: u64,
    pub(super) total: &'a AtomicU64,
}

impl Drop for TaskCount<'_> {
    fn drop(&mut self) {
        self.total.fetch_add(self.n, Relaxed);
    }
}

/// Entry `pi` of half `ph` has a move to a position resolved at the pass's depth: won at
/// once if that position is lost (`to_loss`; true if newly resolved). Otherwise it is to be
/// checked (a candidate): at once in a half without counters; in one with counters when this
/// was its last move not yet known to lose, or, reached from a sub-table where the counters
/// leave captures out (`captures_lose`), when none is left.
#[inline]
pub(super) fn reach(r: &Reached, ph: Half, w: u64, mask: u64, counted: bool) -> u64 {
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

impl BitmapSolver<'_> {
    /// Pass n for the frontier of half `h` (its entries resolved at depth n; cleared). Its
    /// losses are passed over where the pass was `pulled` (`pull_wins`); `loss_words` counts
    /// the words that hold one (`PullChoice`).
    pub(super) fn frontier(
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
}
