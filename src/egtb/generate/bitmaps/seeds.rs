//! Seeds: the sub-tables' positions resolved at depth d (DTM: their own depth; DTZ and DTZ50: 0,
//! since a capture zeroes) join the frontier of pass d, and their un-captures reach this
//! endgame's entries as its own un-moves do. A later solve reads from DTM's log the entries
//! with a capture to a position the opponent loses instead of un-capturing again.

use super::*;

/// Where the seeds of a solve come from (`Seeds` without the entries).
pub(super) struct SeedPlan {
    pub(super) table: usize,
    pub(super) half: Half,
    pub(super) flip: bool,
    pub(super) mover: Color,
    pub(super) captured: PieceType,
}

/// Every sub-table side whose positions un-capture into `material`'s.
pub(super) fn seed_plan(subs: &SubTables, material: &Material) -> Vec<SeedPlan> {
    let mut out = Vec::new();
    for mover in Color::BOTH {
        for captured in CAPTURABLE {
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
pub(super) struct Seeds {
    pub(super) table: usize,
    pub(super) half: Half,
    /// The sub-table's colours are the flip of this endgame's.
    pub(super) flip: bool,
    pub(super) mover: Color,
    pub(super) captured: PieceType,
    /// `entries[starts[d]..starts[d + 1]]` join at depth d.
    pub(super) starts: Vec<usize>,
    /// Sub-table entries; `Y_WINS` marks those that Y, to move, wins.
    pub(super) entries: Vec<u32>,
    /// The man whose squares make the runs of each depth's entries, where they are in an order
    /// where he moves fastest (`seed` un-captures a run at once).
    pub(super) frames: Option<Frames>,
}

/// Which man a run of seeds differs in alone (`Seeds::frames`), and so how `seed` un-captures
/// the run at once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Frames {
    /// The layout's lone last man, who stands by or makes the capture
    /// (`for_each_frame_uncapture`).
    Lone,
    /// The one man of this type of the side that captured, who took the layout's lone last man
    /// (`for_each_capturer_frame_uncapture`); the other men's un-captures go entry by entry.
    Capturer(PieceType),
}

pub(super) const Y_WINS: u32 = 1 << 31;

impl BitmapSolver<'_> {
    pub(super) fn seeds(&self) -> Result<Vec<Seeds>, GenError> {
        seed_plan(self.subs, &self.material)
            .into_iter()
            .map(|p| self.seeds_of(p))
            .collect()
    }

    /// How the seeds of `plan` are un-captured a run at a time (`Frames`), if they can be: by
    /// the lone man where the sub-table's positions hold him, else by the capturer with the
    /// most un-moves of whom there is one.
    pub(super) fn frames_of(&self, plan: &SeedPlan) -> Option<Frames> {
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
    pub(super) fn frame_man(&self, frames: Frames, mover: Color) -> (Color, PieceType) {
        match frames {
            Frames::Lone => self.layout.lone_last_man().expect("a lone last man"),
            Frames::Capturer(k) => (mover, k),
        }
    }

    pub(super) fn seeds_of(&self, plan: SeedPlan) -> Result<Seeds, GenError> {
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

    /// Pass n for the sub-table positions of `s` at depth n: their un-captures, but for those
    /// that Y loses where `skipped[0]` (`reads_capture_wins`) and those Y wins where
    /// `skipped[1]` (`mark_captures_only`).
    pub(super) fn seed(
        &self,
        state: &PassState,
        s: &Seeds,
        n: u16,
        skipped: [bool; 2],
        fresh: &AtomicU64,
    ) {
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
    pub(super) fn uncapture_run(
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
    pub(super) fn win_recorded_captures(
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
    pub(super) fn mark_captures_only(&self, state: &PassState, h: Half) -> bool {
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
}
