//! Pulling a pass's wins, the other way round: each entry still open makes its moves and is won
//! if one reaches a loss, which costs less than the un-moves from every loss once the frontier
//! holds more losses than the half has entries open. Which way a pass goes is estimated from a
//! sample of the entries (`OpenEntries`) until the first pull, and from words after it
//! (`PullChoice`). The first pull marks the broken entries won, so later pulls pass over them
//! by the word.

use super::*;

/// The words of a pull (`BitmapSolver::pull_wins`): those whose open entries' moves it made,
/// and of them those it left with an open entry.
#[derive(Default)]
pub(super) struct OpenWords {
    pub(super) read: AtomicU64,
    pub(super) left: AtomicU64,
}

/// The entries `mask` of word `w` of half `b`, each with a move to a loss, are won at the
/// pass's depth + 1 but where already resolved; how many were not.
#[inline(always)]
pub(super) fn win_word(b: &HalfBits, w: usize, mask: u64) -> u64 {
    let won = b
        .bits
        .set_word(WON, w, mask & !b.bits.word(LOST, w).load(Relaxed));
    if won != 0 {
        b.bits.set_word(b.next(), w, won);
    }
    won.count_ones() as u64
}

/// Entries of a chunk of `live_chunks`.
pub(super) const LIVE_CHUNK: u64 = 1 << 12;

/// Chunks of `live_chunks` a task runs at most (64 Ki entries).
pub(super) const LIVE_TASK_CHUNKS: usize = 16;

/// The sum of `f` over the live runs of half `h` (`Layout::live_runs`), cut into chunks of
/// `LIVE_CHUNK` entries run in parallel.
pub(super) fn live_chunks(
    layout: &Layout,
    h: Half,
    f: impl Fn(std::ops::Range<u64>) -> u64 + Sync,
) -> u64 {
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
pub(super) fn in_word(base: u64, range: &std::ops::Range<u64>) -> u64 {
    let lo = range.start.saturating_sub(base).min(64);
    let hi = range.end.saturating_sub(base).min(64);
    let below = |k: u64| if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
    below(hi) & !below(lo)
}

/// What decides whether a pass over half `h`'s wins pulls (`pull_wins`): its valid entries
/// and their quiet moves a position, estimated from a sample of its live entries.
pub(super) struct OpenEntries {
    pub(super) live: u64,
    pub(super) valid: u64,
    pub(super) moves: u64,
}

impl OpenEntries {
    /// Entries sampled, spread evenly over the live runs.
    pub(super) const SAMPLE: u64 = 1 << 16;

    pub(super) fn sample(layout: &Layout, h: Half) -> OpenEntries {
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
    pub(super) fn pull_costs_less(&self, resolved: u64, marked: u64, losses: u64) -> bool {
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
pub(super) struct PullChoice {
    /// Per half of predecessors: the words its last pull left with open entries.
    pub(super) open_words: [Option<u64>; 2],
    /// Per half of the frontier and parity of the depth: losses per word with one, at the last
    /// such frontier that had any.
    pub(super) density: [[Option<f64>; 2]; 2],
}

impl PullChoice {
    /// The weights of a word pulled and a word pushed, from the times above.
    pub(super) const PULL: f64 = 4.0;
    pub(super) const PUSH: f64 = 5.0;

    /// Does pulling the wins of the half before `h` from the `losses` of `h`'s frontier at
    /// depth `n` cost less than pushing them? None before that half's first pull, which also
    /// marks its broken entries (`pull_wins`).
    pub(super) fn pull_costs_less(&self, h: Half, n: u16, losses: u64) -> Option<bool> {
        let open = self.open_words[Half::of(!h.stm()) as usize]?;
        let density = self.density[h as usize][n as usize % 2].unwrap_or(1.0);
        Some(Self::PULL * (open as f64) < Self::PUSH * losses as f64 / density)
    }

    /// What pass `n` from `h`'s frontier found: its `losses` in `loss_words` words, and the
    /// words its pull left open if it pulled.
    pub(super) fn saw(
        &mut self,
        h: Half,
        n: u16,
        losses: u64,
        loss_words: u64,
        pulled: Option<u64>,
    ) {
        if loss_words > 0 {
            self.density[h as usize][n as usize % 2] = Some(losses as f64 / loss_words as f64);
        }
        if let Some(words) = pulled {
            self.open_words[Half::of(!h.stm()) as usize] = Some(words);
        }
    }
}

impl BitmapSolver<'_> {
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
    pub(super) fn pull_wins(
        &self,
        state: &PassState,
        h: Half,
        fresh: &AtomicU64,
        words: &OpenWords,
    ) -> u64 {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
