//! Thompson's forward check (1996, Section 3): a candidate is lost once every move leads to a
//! win resolved no deeper than n, in the successors' bits and, for captures, the sub-tables.
//! An entry that is never a candidate costs nothing.

use super::*;

impl BitmapSolver<'_> {
    /// The candidates marked in the half before `h` (predecessors of its wins at depth n):
    /// lost at n + 1 if every move now loses. Clears `cand`.
    pub(super) fn check_candidates(
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
    pub(super) fn quiet_entries(
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
    pub(super) fn quiet_not_lost(
        &self,
        bits: &[HalfBits; 2],
        idx: u64,
        pos: &TbPosition,
        most: u8,
    ) -> u8 {
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
    pub(super) fn reaches_loss_word(&self, sb: &HalfBits, h: Half, w: u64, on: u64) -> Option<u64> {
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
    pub(super) fn quiet_open_word(
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
    pub(super) fn succ_words_fetched(
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
    pub(super) fn arrivals_not_lost(
        &self,
        idx: u64,
        pos: &TbPosition,
        won: impl Fn(u64) -> bool,
    ) -> u32 {
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
    pub(super) fn arrivals(&self, pos: &TbPosition) -> u32 {
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
    pub(super) fn captures_all_lose(&self, pos: impl FnOnce() -> TbPosition, n: u16) -> bool {
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
    pub(super) fn captures_not_lost(&self, pos: &TbPosition, n: u16, most: u8) -> u8 {
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
    pub(super) fn capture_loses(
        &self,
        mover: Color,
        succ: &TbPosition,
        class: MoveClass,
        n: u16,
    ) -> bool {
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
