//! What building one table gave: per side to move, the win/draw/loss counts and deepest values,
//! the seconds, the memory, how DTZ50 was found; the one-line report `gentb` prints, and the
//! comparison of the deepest DTM with Nalimov, Haworth, Heinz (2001), Table 8.

use super::solve::{self, Wdl, Work};
use super::verify::VerifyReport;
use crate::egtb::format::{Metric, Outcome, TbValue};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::Material;
use rayon::prelude::*;
use std::fmt;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Per half (side to move) figures of a built table.
#[derive(Clone, Debug, Default)]
pub struct HalfSummary {
    pub positions: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Deepest DTM win and loss (winner's moves).
    pub max_dtm_win: Option<u16>,
    pub max_dtm_loss: Option<u16>,
    /// Deepest DTZ win and loss, DTZ50 win (plies).
    pub max_dtz_win: Option<u16>,
    pub max_dtz_loss: Option<u16>,
    pub max_dtz50_win: Option<u16>,
    /// DTZ wins that the 50-move rule turns into draws.
    pub dtz50_draws_of_wins: u64,
}

/// What building one table gave.
#[derive(Clone, Debug)]
pub struct TableSummary {
    pub material: Material,
    /// None if the table was already present and kept.
    pub built: bool,
    /// Indexed by `Half as usize`; the Wtm half of a symmetric endgame is not stored.
    pub halves: [Option<HalfSummary>; 2],
    pub seconds: f64,
    /// Of `seconds`: the DTM solve, then up to the end of the DTZ solve (with DTM's file when
    /// the init passes are not shared); the rest is DTZ50 and the other files.
    pub split_seconds: [f64; 2],
    pub verify_seconds: f64,
    pub verify: Option<VerifyReport>,
    /// Peak resident memory while this table was generated (the process's so far when the
    /// table was kept), bytes (Linux; 0 elsewhere).
    pub peak_bytes: u64,
    /// Peak resident memory while it was verified: mostly pages of the mapped table files,
    /// which the kernel can drop and read again.
    pub verify_peak_bytes: u64,
    /// Peak anonymous memory (the working arrays, without the mapped files' pages) while it
    /// was generated and while it was verified, sampled, bytes (Linux; 0 elsewhere).
    pub peak_anon_bytes: [u64; 2],
    /// How DTZ50 was found.
    pub dtz50: Dtz50Method,
}

/// How a table's DTZ50 was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dtz50Method {
    /// Equal to DTZ: nothing deeper than 100 plies, sub-endgames the same under the rule.
    SameAsDtz,
    /// Equal to DTZ: nothing deeper than 100 plies, and this many entries that can reach a
    /// sub-endgame result changed by the rule keep their DTZ value.
    Checked(u64),
    /// DTZ with its results deeper than 100 plies drawn (no pawns, sub-endgames the same
    /// under the rule).
    DtzCapped,
    /// A solve of its own.
    Solved,
    /// Solved one pawn level at a time (this many levels).
    ByPawnLevel(u32),
}

impl TableSummary {
    /// The summary of a table found present and kept.
    pub fn kept(material: Material) -> TableSummary {
        TableSummary {
            material,
            built: false,
            halves: [None, None],
            seconds: 0.0,
            split_seconds: [0.0; 2],
            verify_seconds: 0.0,
            verify: None,
            peak_bytes: super::peak_memory_bytes(),
            verify_peak_bytes: 0,
            peak_anon_bytes: [0; 2],
            dtz50: Dtz50Method::SameAsDtz,
        }
    }

    pub fn positions(&self) -> u64 {
        self.halves.iter().flatten().map(|h| h.positions).sum()
    }

    /// One line: endgame, positions, w/d/l per side, max DTM, max DTZ50, seconds, memory.
    pub fn line(&self) -> String {
        let mut s = format!("{:<7}", self.material.to_string());
        if !self.built {
            return s + " present, kept";
        }
        s += &format!(" {:>11} pos", self.positions());
        for h in Half::BOTH {
            if let Some(x) = &self.halves[h as usize] {
                s += &format!(
                    " | {} w/d/l {}/{}/{} dtm {}/{} dtz50 {}",
                    h.name(),
                    x.wins,
                    x.draws,
                    x.losses,
                    opt(x.max_dtm_win),
                    opt(x.max_dtm_loss),
                    opt(x.max_dtz50_win)
                );
            }
        }
        let spoiled: u64 = self
            .halves
            .iter()
            .flatten()
            .map(|h| h.dtz50_draws_of_wins)
            .sum();
        if spoiled > 0 {
            s += &format!(" | {spoiled} wins drawn by the 50-move rule");
        }
        s += &format!(
            " | dtz50 {}",
            match self.dtz50 {
                Dtz50Method::SameAsDtz => "= dtz".to_string(),
                Dtz50Method::Checked(n) => format!("= dtz, {n} entries checked"),
                Dtz50Method::DtzCapped => "= dtz capped at 100 plies".to_string(),
                Dtz50Method::Solved => "1 solve".to_string(),
                Dtz50Method::ByPawnLevel(n) => format!("by {n} pawn levels"),
            }
        );
        let [dtm, dtz] = self.split_seconds;
        s += &format!(
            " | {:.2} s ({:.1} M pos/s; dtm {dtm:.1} s, dtz {dtz:.1} s, dtz50 and files {:.1} s)",
            self.seconds,
            self.positions() as f64 / self.seconds.max(1e-9) / 1e6,
            self.seconds - dtm - dtz
        );
        if let Some(v) = &self.verify {
            s += &format!(
                " | verified {} in {:.2} s, {} disagree, peak {} MiB (anonymous {} MiB)",
                v.checked,
                self.verify_seconds,
                v.disagreements,
                self.verify_peak_bytes >> 20,
                self.peak_anon_bytes[1] >> 20
            );
        }
        s + &format!(
            " | peak {} MiB (anonymous {} MiB)",
            self.peak_bytes >> 20,
            self.peak_anon_bytes[0] >> 20
        )
    }
}

fn opt(x: Option<u16>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

impl HalfSummary {
    /// Counts an entry of DTM value `v`.
    #[inline]
    fn add_dtm(&mut self, v: TbValue) {
        match v.outcome() {
            Outcome::Broken => return,
            Outcome::Draw => self.draws += 1,
            Outcome::Win(n) => {
                self.wins += 1;
                self.max_dtm_win = self.max_dtm_win.max(Some(n));
            }
            Outcome::Loss(n) => {
                self.losses += 1;
                self.max_dtm_loss = self.max_dtm_loss.max(Some(n));
            }
        }
        self.positions += 1;
    }

    /// Counts an entry of DTZ or DTZ50 (`metric`) value `v`; `plain_win`: a win without the
    /// rule.
    #[inline]
    fn add_dtz(&mut self, metric: Metric, v: TbValue, plain_win: bool) {
        let out = v.outcome();
        match (out, metric) {
            (Outcome::Win(n), Metric::Dtz) => self.max_dtz_win = self.max_dtz_win.max(Some(n)),
            (Outcome::Loss(n), Metric::Dtz) => self.max_dtz_loss = self.max_dtz_loss.max(Some(n)),
            (Outcome::Win(n), _) => self.max_dtz50_win = self.max_dtz50_win.max(Some(n)),
            _ => {}
        }
        if out == Outcome::Draw && plain_win {
            self.dtz50_draws_of_wins += 1;
        }
    }

    /// The figures of two parts of a half together.
    pub(super) fn merge(self, o: HalfSummary) -> HalfSummary {
        HalfSummary {
            positions: self.positions + o.positions,
            wins: self.wins + o.wins,
            draws: self.draws + o.draws,
            losses: self.losses + o.losses,
            max_dtm_win: self.max_dtm_win.max(o.max_dtm_win),
            max_dtm_loss: self.max_dtm_loss.max(o.max_dtm_loss),
            max_dtz_win: self.max_dtz_win.max(o.max_dtz_win),
            max_dtz_loss: self.max_dtz_loss.max(o.max_dtz_loss),
            max_dtz50_win: self.max_dtz50_win.max(o.max_dtz50_win),
            dtz50_draws_of_wins: self.dtz50_draws_of_wins + o.dtz50_draws_of_wins,
        }
    }
}

pub(super) fn summarise_dtm(index: &EndgameIndex, work: &Work) -> [Option<HalfSummary>; 2] {
    summarise_dtm_by(index, |h, i| {
        let v = work[h as usize].as_ref().expect("stored half");
        solve::to_file_value(Metric::Dtm, v[i].load(Relaxed))
    })
}

/// The DTM summary of the values `value(half, entry)` of `index`'s stored halves.
pub(super) fn summarise_dtm_by(
    index: &EndgameIndex,
    value: impl Fn(Half, usize) -> TbValue + Sync,
) -> [Option<HalfSummary>; 2] {
    let mut out: [Option<HalfSummary>; 2] = [None, None];
    for &h in index.stored_halves() {
        let s = (0..index.size(h) as usize)
            .into_par_iter()
            .fold(HalfSummary::default, |mut s, i| {
                s.add_dtm(value(h, i));
                s
            })
            .reduce(HalfSummary::default, HalfSummary::merge);
        out[h as usize] = Some(s);
    }
    out
}

pub(super) fn summarise_dtz(
    halves: &mut [Option<HalfSummary>; 2],
    work: &Work,
    metric: Metric,
    plain: Option<&Wdl>,
) {
    let sizes = [0, 1].map(|h| work[h].as_ref().map_or(0, |v| v.len()));
    summarise_dtz_by(
        halves,
        sizes,
        metric,
        |h, i| {
            let v = work[h as usize].as_ref().expect("stored half");
            solve::to_file_value(metric, v[i].load(Relaxed))
        },
        plain.map(|p| move |h: Half, i: usize| p[h as usize].as_deref().is_some_and(|p| p[i] == 2)),
    )
}

/// Adds the DTZ or DTZ50 (`metric`) summary of the values `value(half, entry)` (`sizes[h]`
/// entries a half) to `halves`; `plain_win(half, entry)`: the entry is a win without the rule.
pub(super) fn summarise_dtz_by(
    halves: &mut [Option<HalfSummary>; 2],
    sizes: [usize; 2],
    metric: Metric,
    value: impl Fn(Half, usize) -> TbValue + Sync,
    plain_win: Option<impl Fn(Half, usize) -> bool + Sync>,
) {
    for h in Half::BOTH {
        let Some(s) = halves[h as usize].as_mut() else {
            continue;
        };
        let part = (0..sizes[h as usize])
            .into_par_iter()
            .fold(HalfSummary::default, |mut s, i| {
                s.add_dtz(
                    metric,
                    value(h, i),
                    plain_win.as_ref().is_some_and(|p| p(h, i)),
                );
                s
            })
            .reduce(HalfSummary::default, HalfSummary::merge);
        *s = std::mem::take(s).merge(part);
    }
}

/// The summary of consecutive entries of a half from their values in the three metrics.
pub(super) fn summarise_block(dtm: &[TbValue], dtz: &[TbValue], dtz50: &[TbValue]) -> HalfSummary {
    const CHUNK: usize = 1 << 16;
    dtm.par_chunks(CHUNK)
        .zip(dtz.par_chunks(CHUNK))
        .zip(dtz50.par_chunks(CHUNK))
        .fold(HalfSummary::default, |mut s, ((m, z), z50)| {
            for ((&m, &z), &z50) in m.iter().zip(z).zip(z50) {
                s.add_dtm(m);
                s.add_dtz(Metric::Dtz, z, false);
                s.add_dtz(Metric::Dtz50, z50, matches!(z.outcome(), Outcome::Win(_)));
            }
            s
        })
        .reduce(HalfSummary::default, HalfSummary::merge)
}

/// Table 8 of Nalimov, Haworth, Heinz (2001): the largest DTM per endgame, as
/// `[white wins wtm, white wins btm, black wins wtm, black wins btm]` (winner's moves).
pub fn table8(endgame: &Material) -> Option<[Option<u16>; 4]> {
    const CSV: &str = include_str!("../../../tests/data/nalimov_max_dtm.csv");
    let name = endgame.canonical().0.to_string();
    CSV.lines().skip(1).find_map(|l| {
        let mut f = l.split(',');
        (f.next()? == name).then(|| {
            let mut out = [None; 4];
            for o in out.iter_mut() {
                *o = f.next().and_then(|x| x.trim().parse().ok());
            }
            out
        })
    })
}

impl TableSummary {
    /// The four figures of Table 8 from this table's summary.
    pub fn max_dtm(&self) -> [Option<u16>; 4] {
        let h = |i: usize| self.halves[i].as_ref().or(self.halves[1].as_ref());
        let (w, b) = (h(0), h(1));
        if self.material.is_symmetric() {
            // Only Btm is stored; Wtm is its colour-flipped image.
            let b = b.expect("btm stored");
            return [b.max_dtm_win, b.max_dtm_loss, b.max_dtm_loss, b.max_dtm_win];
        }
        let (w, b) = (w.expect("wtm"), b.expect("btm"));
        [w.max_dtm_win, b.max_dtm_loss, w.max_dtm_loss, b.max_dtm_win]
    }
}

/// One half's step of a pass as `gentb --pass-times` prints it: what `pull_costs_less` saw,
/// what the pass found, and the seconds of each step, so that the choice between pulling and
/// pushing can be checked against what each cost.
#[derive(Default)]
pub struct PassTimes {
    pub pulled: bool,
    /// The other half's frontier: its losses (entries, and words that hold one).
    pub losses: u64,
    pub loss_words: u64,
    /// The predecessors' half: valid entries left open (estimated), and the words a pull read
    /// with an open entry.
    pub open_valid: u64,
    pub open_words: u64,
    pub won: u64,
    pub lost: u64,
    pub pull: f64,
    pub frontier: f64,
    pub seeds: f64,
    pub checks: f64,
}

/// The seconds of a bitmap solve's steps (`gentb --pass-times`): those before its first pass,
/// and each pass's, per half.
pub enum SolveTimes {
    Setup {
        material: Material,
        metric: Metric,
        steps: Vec<(&'static str, f64)>,
    },
    Pass {
        material: Material,
        metric: Metric,
        n: u16,
        /// Indexed by the half of the predecessors (`Half as usize`).
        halves: [PassTimes; 2],
        /// The seconds the pass's depth logs took.
        log_seconds: f64,
    },
    /// The steps of a solve by pawn structure (`structures`), all metrics together.
    ByStructure {
        material: Material,
        steps: Vec<(&'static str, f64)>,
    },
}

impl fmt::Display for SolveTimes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SolveTimes::Setup {
                material,
                metric,
                steps,
            } => {
                let steps: Vec<String> =
                    steps.iter().map(|(s, t)| format!("{s} {t:.2} s")).collect();
                write!(
                    f,
                    "{material} {} before the passes: {}",
                    metric.name(),
                    steps.join(", ")
                )
            }
            SolveTimes::Pass {
                material,
                metric,
                n,
                halves,
                log_seconds,
            } => {
                for h in Half::BOTH {
                    let t = &halves[h as usize];
                    writeln!(
                        f,
                        "{material} {} pass {n} {}: {} losses {} ({} words), open {} ({} words \
                         read); won {} lost {}; pull {:.2} s frontier {:.2} s seeds {:.2} s \
                         checks {:.2} s",
                        metric.name(),
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
                    )?;
                }
                write!(
                    f,
                    "{material} {} pass {n}: logs {log_seconds:.2} s",
                    metric.name()
                )
            }
            SolveTimes::ByStructure { material, steps } => {
                let steps: Vec<String> =
                    steps.iter().map(|(s, t)| format!("{s} {t:.1} s")).collect();
                write!(f, "{material} by structure: {}", steps.join(", "))
            }
        }
    }
}

/// Where a bitmap solve reports the seconds of its steps, as they happen.
#[derive(Clone)]
pub struct TimesSink(pub Arc<dyn Fn(&SolveTimes) + Send + Sync>);

impl TimesSink {
    pub fn report(&self, times: &SolveTimes) {
        (self.0)(times)
    }
}

impl fmt::Debug for TimesSink {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("TimesSink")
    }
}
