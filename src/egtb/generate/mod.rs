//! `engine gentb`: builds endgame tables (DTM, DTZ, DTZ50) by retrograde analysis, sub-endgames
//! first (Thompson 1996, Section 6: waves by number of men), writes them with `egtb::file`
//! (atomic), and verifies each one by forward minimax (`verify`). The solver is in `solve`, the
//! move and un-move generators in `moves`.

pub mod cli;
pub mod layout;
pub mod moves;
pub mod solve;
pub mod verify;

use crate::egtb::file::{
    file_name, process_gone, write_table, Metric, Outcome, TableError, TableSpec, TbValue,
};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::{Material, MaterialError};
use crate::egtb::tables::EndgameTables;
use indicatif::{ProgressBar, ProgressStyle};
use layout::Layout;
use rayon::prelude::*;
use solve::{wdl_of_work, Solver, Start, SubTables, Wdl, Work};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;
pub use verify::VerifyReport;

/// How to run `gentb`.
#[derive(Clone, Debug)]
pub struct GenOptions {
    pub dir: PathBuf,
    /// Rebuild tables that are already present and valid.
    pub force: bool,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Verify each table after building it.
    pub verify: bool,
    /// Always solve DTZ50 on its own, even when it must equal DTZ (tests the rule's solver).
    pub full_dtz50: bool,
}

#[derive(Debug)]
pub enum GenError {
    Material(MaterialError),
    Table(TableError),
    Io(PathBuf, std::io::Error),
    /// Verification found entries that disagree with their successors.
    Verify {
        endgame: String,
        report: VerifyReport,
    },
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            GenError::Material(e) => write!(f, "{e}"),
            GenError::Table(e) => write!(f, "{e}"),
            GenError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            GenError::Verify { endgame, report } => {
                write!(
                    f,
                    "{endgame}: verification failed: {} of {} entries disagree",
                    report.disagreements, report.checked
                )?;
                for e in &report.examples {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for GenError {}

impl From<TableError> for GenError {
    fn from(e: TableError) -> Self {
        GenError::Table(e)
    }
}

impl From<MaterialError> for GenError {
    fn from(e: MaterialError) -> Self {
        GenError::Material(e)
    }
}

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

/// Starts a new peak for `peak_memory_bytes` (Linux resets VmHWM when 5 is written to
/// clear_refs); where that fails the peak stays the process's.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (VmHWM), 0 if unknown.
pub fn peak_memory_bytes() -> u64 {
    status_bytes("VmHWM:")
}

/// Samples this process's anonymous resident memory (`RssAnon`) while it lives and keeps the
/// largest value: the memory a build needs, where VmHWM also counts the pages of the mapped
/// sub-tables, which the kernel drops under pressure and reads again (Linux has no peak of
/// its own for it). Sampled every 10 ms: the large arrays live for seconds.
struct AnonPeak {
    stop: Arc<AtomicBool>,
    sampler: Option<std::thread::JoinHandle<u64>>,
}

impl AnonPeak {
    fn start() -> AnonPeak {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            loop {
                peak = peak.max(status_bytes("RssAnon:"));
                if flag.load(Relaxed) {
                    return peak;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        AnonPeak {
            stop,
            sampler: Some(sampler),
        }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Relaxed);
        let sampler = self.sampler.take().expect("finished once");
        sampler.join().unwrap_or(0)
    }
}

/// A build that fails stops its sampler too.
impl Drop for AnonPeak {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// A memory figure of `/proc/self/status` (`key` with its colon), bytes; 0 if unknown.
fn status_bytes(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The endgames to build for `targets`, each after every sub-endgame it needs (bare kings
/// need no table).
pub fn plan(targets: &[Material]) -> Vec<Material> {
    fn visit(m: Material, out: &mut Vec<Material>) {
        let m = m.canonical().0;
        if m.men() <= 2 || out.contains(&m) {
            return;
        }
        for s in m.sub_endgames() {
            visit(s, out);
        }
        out.push(m);
    }
    let mut out = Vec::new();
    for t in targets {
        visit(*t, &mut out);
    }
    out
}

/// Opens the sub-endgame tables of `material` from `dir`.
pub fn open_subs(dir: &Path, material: &Material) -> Result<Vec<EndgameTables>, GenError> {
    material
        .sub_endgames()
        .iter()
        .filter(|m| m.men() > 2)
        .map(|m| EndgameTables::open(dir, m).map_err(GenError::from))
        .collect()
}

/// Builds every endgame of `plan(targets)` that is missing (or all with `force`); calls
/// `report` after each.
pub fn gentb(
    targets: &[Material],
    opts: &GenOptions,
    report: &mut dyn FnMut(&TableSummary),
) -> Result<Vec<TableSummary>, GenError> {
    std::fs::create_dir_all(&opts.dir).map_err(|e| GenError::Io(opts.dir.clone(), e))?;
    let mut all = Vec::new();
    let wanted: Vec<Material> = targets.iter().map(|m| m.canonical().0).collect();
    for m in plan(targets) {
        // Sub-endgames are rebuilt with --force only when named.
        let force = opts.force && wanted.contains(&m);
        let s = if !force && EndgameTables::open(&opts.dir, &m).is_ok() {
            TableSummary {
                material: m,
                built: false,
                halves: [None, None],
                seconds: 0.0,
                split_seconds: [0.0; 2],
                verify_seconds: 0.0,
                verify: None,
                peak_bytes: peak_memory_bytes(),
                verify_peak_bytes: 0,
                peak_anon_bytes: [0; 2],
                dtz50: Dtz50Method::SameAsDtz,
            }
        } else {
            build_endgame(&m, opts)?
        };
        report(&s);
        all.push(s);
    }
    Ok(all)
}

fn progress_bar(opts: &GenOptions, total: u64) -> ProgressBar {
    if !opts.progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:<24} [{bar:30}] {pos}/{len} resolved, {per_sec}, eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// Sharing the DTM and DTZ init passes keeps DTZ's start (3 bytes an entry) beside DTM's
/// arrays, so it is done only when 6 bytes an entry fit in this. KNNKP (396 M entries) built
/// with sharing peaked at 3,948 MiB, too near the 4 GiB goal: it and larger endgames keep two
/// passes; KBBKN (166 M) and the 4-man tables share.
const SHARED_INIT_BYTES: u64 = 2 << 30;

/// Builds (and verifies, if asked) one endgame whose sub-endgames are present in `opts.dir`.
pub fn build_endgame(material: &Material, opts: &GenOptions) -> Result<TableSummary, GenError> {
    let m = material.canonical().0;
    reset_peak_memory();
    let anon = AnonPeak::start();
    let start = Instant::now();
    let subs = SubTables::new(&m, open_subs(&opts.dir, &m)?);
    let staging = Staging::new(&opts.dir)?;
    let out = staging.dir.as_path();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    let total: u64 = Half::BOTH.iter().map(|&h| layout.size(h)).sum();
    let bar = progress_bar(opts, total);
    let bar = &bar;
    let progress = |label: String| {
        bar.set_position(0);
        move |pass: u32, resolved: u64| {
            bar.set_message(format!("{label} pass {pass}"));
            bar.set_position(resolved);
        }
    };
    let solve = |metric: Metric, pawn_wdl: Option<&Wdl>, start: Option<Start>| -> Work {
        let on_pass = progress(format!("{m} {}", metric.name()));
        Solver::new(&layout, &subs, metric, pawn_wdl).run(start, &on_pass)
    };
    let nalimov = |work: &Work| -> Work {
        let [out] = to_nalimov(&layout, [work]);
        bar.set_message(format!("{m} writing"));
        out
    };

    // Each working array is dropped as soon as its Nalimov copy exists (shadowing would keep
    // it alive): peak memory is what limits the largest endgames.
    // DTM's and DTZ's init passes are one when both metrics' arrays fit beside each other
    // (6 bytes an entry instead of 3); the largest endgames keep two passes and their memory.
    // In that same room DTM's final values (2 bytes an entry) wait for DTZ's, and one pass
    // puts both in Nalimov order (the Nalimov index of every entry computed once).
    let shared = total * 6 <= SHARED_INIT_BYTES;
    let (dtm_start, dtz_start) = if shared {
        bar.set_message(format!("{m} init"));
        let (a, b) = Solver::new(&layout, &subs, Metric::Dtm, None).init_dtm_dtz();
        (Some(a), Some(b))
    } else {
        (None, None)
    };
    let dtm_work = solve(Metric::Dtm, None, dtm_start);
    let dtm_seconds = start.elapsed().as_secs_f64();
    // Pawn pushes are DTZ's zeroing moves inside the table: their value is DTM's result.
    let wdl = m.has_pawns().then(|| wdl_of_work(&dtm_work));
    let mut halves = [None, None];
    let dtm_waiting = if shared {
        Some(dtm_work)
    } else {
        let dtm = nalimov(&dtm_work);
        drop(dtm_work);
        halves = summarise_dtm(&index, &dtm);
        write_work(out, &m, &[Metric::Dtm], dtm)?;
        None
    };

    let clean = subs.rule50_clean();
    let dtz_work = solve(Metric::Dtz, wdl.as_ref(), dtz_start);
    let split_seconds = [dtm_seconds, start.elapsed().as_secs_f64() - dtm_seconds];
    // DTZ50. When the sub-endgames' results are the same under the rule, the two solves meet
    // the same terminal values and differ only in stopping at 100 plies: DTZ50 is DTZ with the
    // deeper results drawn. With pawns that holds only if nothing is deeper than 100 plies (a
    // push's value is its target's result, which the rule may change). When some sub-endgame
    // results differ, DTZ (if no deeper than 100 plies) is still DTZ50 if every entry that
    // can reach such a result keeps its value (`Solver::dtz_holds_under_rule50`). Otherwise
    // DTZ50 is solved, by pawn level when pawn-move targets need their own DTZ50 result
    // (`Solver::run_by_pawn_level`).
    let dtz_max = solve::max_depth(&dtz_work);
    let solved = if m.has_pawns() {
        Dtz50Method::ByPawnLevel(layout.max_pawn_level() as u32)
    } else {
        Dtz50Method::Solved
    };
    let dtz50_method = if opts.full_dtz50 {
        solved
    } else if dtz_max <= solve::RULE50_PLIES {
        if clean {
            Dtz50Method::SameAsDtz
        } else {
            bar.set_message(format!("{m} dtz50 check"));
            Solver::new(&layout, &subs, Metric::Dtz50, None)
                .dtz_holds_under_rule50(&dtz_work)
                .map_or(solved, Dtz50Method::Checked)
        }
    } else if clean && !m.has_pawns() {
        Dtz50Method::DtzCapped
    } else {
        solved
    };
    let dtz = match dtm_waiting {
        Some(dtm_work) => {
            let [dtm, dtz] = to_nalimov(&layout, [&dtm_work, &dtz_work]);
            drop((dtm_work, dtz_work));
            bar.set_message(format!("{m} writing"));
            halves = summarise_dtm(&index, &dtm);
            write_work(out, &m, &[Metric::Dtm], dtm)?;
            dtz
        }
        None => {
            let dtz = nalimov(&dtz_work);
            drop(dtz_work);
            dtz
        }
    };
    let dtz_wdl_wins: Wdl = wdl_of_work(&dtz);
    summarise_dtz(&mut halves, &dtz, Metric::Dtz, None);

    match dtz50_method {
        Dtz50Method::SameAsDtz | Dtz50Method::Checked(_) => {
            bar.set_message(format!("{m} dtz50 = dtz"));
            summarise_dtz(&mut halves, &dtz, Metric::Dtz50, Some(&dtz_wdl_wins));
            write_work(out, &m, &[Metric::Dtz, Metric::Dtz50], dtz)?;
        }
        Dtz50Method::DtzCapped => {
            bar.set_message(format!("{m} dtz50 = dtz capped"));
            let dtz50 = solve::capped_at_rule50(&dtz);
            write_work(out, &m, &[Metric::Dtz], dtz)?;
            summarise_dtz(&mut halves, &dtz50, Metric::Dtz50, Some(&dtz_wdl_wins));
            write_work(out, &m, &[Metric::Dtz50], dtz50)?;
        }
        Dtz50Method::Solved | Dtz50Method::ByPawnLevel(_) => {
            write_work(out, &m, &[Metric::Dtz], dtz)?;
            drop(wdl);
            let solver = Solver::new(&layout, &subs, Metric::Dtz50, None);
            let on_pass = progress(format!("{m} dtz50"));
            let dtz50_work = if m.has_pawns() {
                solver.run_by_pawn_level(&on_pass)
            } else {
                solver.run(None, &on_pass)
            };
            let dtz50 = nalimov(&dtz50_work);
            drop(dtz50_work);
            summarise_dtz(&mut halves, &dtz50, Metric::Dtz50, Some(&dtz_wdl_wins));
            write_work(out, &m, &[Metric::Dtz50], dtz50)?;
        }
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let peak_bytes = peak_memory_bytes();
    reset_peak_memory();
    let peak_anon = anon.finish();
    let anon = AnonPeak::start();

    let (verify, verify_seconds) = if opts.verify {
        let t = Instant::now();
        let r = verify_tables(out, &m, &subs.tables)?;
        let secs = t.elapsed().as_secs_f64();
        if r.disagreements > 0 {
            // `staging` is dropped with the wrong files: nothing of them reaches `opts.dir`.
            return Err(GenError::Verify {
                endgame: m.to_string(),
                report: r,
            });
        }
        (Some(r), secs)
    } else {
        (None, 0.0)
    };
    staging.publish(&opts.dir, &m)?;
    Ok(TableSummary {
        material: m,
        built: true,
        halves,
        seconds,
        split_seconds,
        verify_seconds,
        verify,
        peak_bytes,
        verify_peak_bytes: peak_memory_bytes(),
        peak_anon_bytes: [peak_anon, anon.finish()],
        dtz50: dtz50_method,
    })
}

/// The directory a table is written to and verified in before it is moved into the table
/// directory: a kill during generation or verification leaves no complete-looking table there.
/// Named `.staging.<pid>.<n>`: builders sharing a directory, in processes or threads, never meet.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(tables: &Path) -> Result<Staging, GenError> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e| GenError::Io(p, e)
        };
        // Staging directories of killed builders.
        for e in std::fs::read_dir(tables).map_err(io(tables))?.flatten() {
            let name = e.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(".staging.")?.split('.').next());
            if pid.and_then(|p| p.parse().ok()).is_some_and(process_gone) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Relaxed);
        let dir = tables.join(format!(".staging.{}.{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        Ok(Staging { dir })
    }

    /// Moves the three files of `m` into `tables`, DTM last: a reader takes a table as present
    /// only when all three are there.
    fn publish(&self, tables: &Path, m: &Material) -> Result<(), GenError> {
        for metric in [Metric::Dtz, Metric::Dtz50, Metric::Dtm] {
            let name = file_name(m, metric);
            let to = tables.join(&name);
            std::fs::rename(self.dir.join(&name), &to).map_err(|e| GenError::Io(to, e))?;
        }
        // The renames are durable only once the directory is.
        std::fs::File::open(tables)
            .and_then(|d| d.sync_all())
            .map_err(|e| GenError::Io(tables.to_path_buf(), e))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn verify_tables(
    dir: &Path,
    m: &Material,
    subs: &[EndgameTables],
) -> Result<VerifyReport, GenError> {
    // Every entry is read once per predecessor: the table checked is held decompressed.
    let own = EndgameTables::open_loaded(dir, m)?;
    Ok(verify::verify(&own, subs))
}

/// `engine gentb --verify`: checks present tables against their successors.
pub fn verify_endgame(dir: &Path, material: &Material) -> Result<VerifyReport, GenError> {
    let m = material.canonical().0;
    let subs = open_subs(dir, &m)?;
    verify_tables(dir, &m, &subs)
}

/// Writes `work` as the file of each of `metrics` (which must share one file encoding: DTZ and
/// DTZ50 do).
fn write_work(dir: &Path, m: &Material, metrics: &[Metric], work: Work) -> Result<(), GenError> {
    // `into_iter().map().collect()` into a type of the same size reuses the allocation.
    let [w, b] = work.map(|h| {
        h.map(|v| {
            v.into_iter()
                .map(|a| solve::to_file_value(metrics[0], a.into_inner()))
                .collect::<Vec<TbValue>>()
        })
    });
    let mut halves: Vec<(Half, &[TbValue])> = Vec::new();
    if let Some(v) = &w {
        halves.push((Half::Wtm, v));
    }
    if let Some(v) = &b {
        halves.push((Half::Btm, v));
    }
    for &metric in metrics {
        write_table(
            dir,
            &TableSpec {
                material: *m,
                metric,
                halves: &halves,
                compress: true,
            },
        )?;
    }
    Ok(())
}

impl HalfSummary {
    /// The figures of two parts of a half together.
    fn merge(self, o: HalfSummary) -> HalfSummary {
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

fn summarise_dtm(index: &EndgameIndex, work: &Work) -> [Option<HalfSummary>; 2] {
    let mut out: [Option<HalfSummary>; 2] = [None, None];
    for &h in index.stored_halves() {
        let v = work[h as usize].as_ref().expect("stored half");
        let s = v
            .par_iter()
            .fold(HalfSummary::default, |mut s, a| {
                match solve::to_file_value(Metric::Dtm, a.load(Relaxed)).outcome() {
                    Outcome::Broken => return s,
                    Outcome::Draw => s.draws += 1,
                    Outcome::Win(n) => {
                        s.wins += 1;
                        s.max_dtm_win = s.max_dtm_win.max(Some(n));
                    }
                    Outcome::Loss(n) => {
                        s.losses += 1;
                        s.max_dtm_loss = s.max_dtm_loss.max(Some(n));
                    }
                }
                s.positions += 1;
                s
            })
            .reduce(HalfSummary::default, HalfSummary::merge);
        out[h as usize] = Some(s);
    }
    out
}

fn summarise_dtz(
    halves: &mut [Option<HalfSummary>; 2],
    work: &Work,
    metric: Metric,
    plain: Option<&Wdl>,
) {
    for h in 0..2 {
        let (Some(s), Some(v)) = (halves[h].as_mut(), work[h].as_ref()) else {
            continue;
        };
        let plain = plain.and_then(|p| p[h].as_deref());
        let part = v
            .par_iter()
            .enumerate()
            .fold(HalfSummary::default, |mut s, (i, a)| {
                let out = solve::to_file_value(metric, a.load(Relaxed)).outcome();
                match (out, metric) {
                    (Outcome::Win(n), Metric::Dtz) => s.max_dtz_win = s.max_dtz_win.max(Some(n)),
                    (Outcome::Loss(n), Metric::Dtz) => s.max_dtz_loss = s.max_dtz_loss.max(Some(n)),
                    (Outcome::Win(n), _) => s.max_dtz50_win = s.max_dtz50_win.max(Some(n)),
                    _ => {}
                }
                if out == Outcome::Draw && plain.is_some_and(|p| p[i] == 2) {
                    s.dtz50_draws_of_wins += 1;
                }
                s
            })
            .reduce(HalfSummary::default, HalfSummary::merge);
        *s = std::mem::take(s).merge(part);
    }
}

/// Working values re-ordered from the generator's layout into the Nalimov index's order: each
/// valid entry of every work in `works` (one endgame's metrics) is written to its Nalimov
/// entries (`Layout::nalimov_entries`, found once for all); the rest stay broken. Layout and
/// index both number the kings first, so the writes stay near each other.
fn to_nalimov<const N: usize>(layout: &Layout, works: [&Work; N]) -> [Work; N] {
    use std::sync::atomic::AtomicU16;
    const CHUNK: u64 = 1 << 12;
    let index = layout.nalimov();
    let halves = [Half::Wtm, Half::Btm].map(|h| {
        if !index.stored_halves().contains(&h) {
            return None;
        }
        let out: [Vec<AtomicU16>; N] = std::array::from_fn(|_| {
            (0..index.size(h))
                .into_par_iter()
                .map(|_| AtomicU16::new(solve::RESOLVED | solve::CODE_NONE))
                .collect()
        });
        let src = works.map(|w| w[h as usize].as_ref().expect("both halves worked"));
        let size = layout.size(h);
        (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                let codes = src.map(|s| s[idx as usize].load(Relaxed));
                if codes[0] & !solve::RESOLVED == solve::CODE_NONE {
                    continue; // broken
                }
                let pos = layout.decode_valid(h, idx);
                layout.nalimov_entries(h, idx, &pos, |i| {
                    for (o, &code) in out.iter().zip(&codes) {
                        o[i as usize].store(code, Relaxed);
                    }
                });
            }
        });
        Some(out)
    });
    let [w, b] = halves;
    let mut w = w.map(|a| a.map(Some));
    let mut b = b.map(|a| a.map(Some));
    std::array::from_fn(|k| {
        [
            w.as_mut().and_then(|a| a[k].take()),
            b.as_mut().and_then(|a| a[k].take()),
        ]
    })
}
