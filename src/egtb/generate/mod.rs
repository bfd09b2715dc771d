//! `engine gentb`: builds endgame tables (DTM, DTZ, DTZ50) by retrograde analysis, sub-endgames
//! first (Thompson 1996, Section 6: waves by number of men), writes them with `egtb::format`
//! into a staging directory (`egtb::format::staging`), verifies each one by forward minimax
//! (`verify`) and only then moves it into the table directory. The move and un-move generators
//! are in `moves`, the working layout in `layout`, the report of a build in `summary`, the
//! files' last form (the WDL file, one side kept) in `finish`, the rewriting of older files
//! in `recompress`.
//!
//! Two solvers, chosen per endgame (`uses_bitmaps`):
//! - `solve`, in values: a 2-byte working value and a 1-byte un-move counter an entry and
//!   metric, both sides to move at once. Fast, but 5-7 bytes an entry: pawn endgames (DTZ50 by
//!   pawn level) and pawnless ones up to five men use it.
//! - `bitmaps`, Thompson's bitmaps: four bits an entry (`bits`), the depths logged to disk as
//!   the passes go (`depth_log`), so that nothing of a solve stays in memory after it. DTM is
//!   solved first; DTZ and DTZ50 start from its mates, its losses (only those can be lost) and
//!   its move counts (`move_counts`). When the solves are over, the values of the metrics are
//!   put together one Nalimov king block at a time and compressed straight into the files in
//!   their final form (`format::TableWriter`), no half held whole or staged on disk. Every
//!   pawnless six-man endgame fits in 16 GiB (`bitmaps::memory_bytes`), with counters where
//!   room is left; each solve takes again the arrays the one before it freed
//!   (`memory::Recycling`), since fresh pages cost a virtual machine's kernel more than a write.
//!
//! Verification (`verify`) holds a table of up to five men decompressed; a six-man table is
//! checked half by half, in rounds by the square of the king that does not move, the entries a
//! round's moves lead to packed in 4 bytes each. The rounds done are recorded beside the files,
//! so a stopped verification goes on where it was.
//!
//! A build that the memory or the disk present cannot hold is refused before anything starts
//! (`check_resources`); an interrupted one leaves only its staging directory, which the next
//! build removes, and starts again. The figures behind these choices are in
//! `docs/benchmarks.md` (table generation).

mod bitmaps;
mod bits;
mod depth_log;
mod final_files;
pub mod finish;
pub mod layout;
mod memory;
mod move_counts;
pub mod moves;
pub mod plan;
mod pool;
pub mod recompress;
pub mod solve;
mod structures;
mod summary;
pub mod verify;

use crate::egtb::format::staging::Staging;
use crate::egtb::format::{write_compact, Metric, TableError, TbValue};
use crate::egtb::index::{EndgameIndex, FrameCache, Half};
use crate::egtb::material::{Material, MaterialError};
use crate::egtb::play::tables::{self, EndgameTables};
pub use bitmaps::{Counting, Pulling};
use final_files::FinalFiles;
use indicatif::{ProgressBar, ProgressStyle};
use layout::Layout;
pub use memory::peak_memory_bytes;
use memory::{reset_peak_memory, AnonPeak};
pub use plan::order as plan;
use rayon::prelude::*;
use solve::{wdl_of_work, Solver, Start, SubTables, Wdl, Work};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;
use summary::{summarise_dtm, summarise_dtz};
pub use summary::{
    table8, Dtz50Method, HalfSummary, PassTimes, SolveTimes, TableSummary, TimesSink,
};
pub use verify::VerifyReport;

/// How to run `gentb`.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Where the tables built go; it must exist.
    pub dir: PathBuf,
    /// Further directories whose tables serve as sub-tables (searched after `dir`).
    pub also: Vec<PathBuf>,
    /// Rebuild tables that are already present and valid.
    pub force: bool,
    /// Where progress is drawn (hidden: nowhere).
    pub progress: ProgressBar,
    /// Verify each table after building it.
    pub verify: bool,
    /// Always solve DTZ50 on its own, even when it must equal DTZ (tests the rule's solver).
    pub full_dtz50: bool,
    /// Solve pawnless endgames in bitmaps even where the values fit in memory (`uses_bitmaps`).
    pub bitmaps: bool,
    /// Solve endgames with pawns one pawn structure at a time (`structures`) even where the
    /// whole endgame's values fit in memory.
    pub structures: bool,
    /// Which halves of a bitmap solve keep un-move counters (default: where the memory allows).
    pub counting: Counting,
    /// How a bitmap solve's passes find their wins (default: as each pass costs least).
    pub pulling: Pulling,
    /// Where each bitmap pass's steps and their seconds go (none: nowhere).
    pub pass_times: Option<TimesSink>,
}

impl GenOptions {
    /// Building into `dir`, verified, no progress shown.
    pub fn new(dir: &Path) -> GenOptions {
        GenOptions {
            dir: dir.to_path_buf(),
            also: Vec::new(),
            force: false,
            progress: ProgressBar::hidden(),
            verify: true,
            full_dtz50: false,
            bitmaps: false,
            structures: false,
            counting: Counting::WhereMemoryAllows,
            pulling: Pulling::Chosen,
            pass_times: None,
        }
    }

    /// The directories tables are looked for in, `dir` first.
    fn dirs(&self) -> impl Iterator<Item = &Path> + Clone {
        std::iter::once(self.dir.as_path()).chain(self.also.iter().map(PathBuf::as_path))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    Material(#[from] MaterialError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
    #[error(transparent)]
    Memory(#[from] crate::memory::OutOfMemory),
    #[error(transparent)]
    Recompress(#[from] crate::egtb::generate::recompress::RecompressError),
    /// The machine lacks the memory or disk a build needs; nothing was started.
    #[error("{endgame} cannot be built here: {what}")]
    Resources { endgame: String, what: String },
    /// The command was given nothing to do, or contradictory orders.
    #[error("{0}")]
    Usage(String),
    /// Verification found entries that disagree with their successors.
    #[error("{endgame}: verification failed: {} of {} entries disagree{}", report.disagreements, report.checked, report.examples.iter().map(|e| format!("\n  {e}")).collect::<String>())]
    Verify {
        endgame: String,
        report: VerifyReport,
    },
}

/// The first of `opts`'s directories that holds `m`'s three tables, valid.
pub fn find_tables(opts: &GenOptions, m: &Material) -> Option<PathBuf> {
    opts.dirs()
        .find(|d| EndgameTables::open(d, m).is_ok())
        .map(Path::to_path_buf)
}

/// Opens the sub-endgame tables of `material` (`play::tables::open_subs`).
pub fn open_subs<'a>(
    dirs: impl Iterator<Item = &'a Path> + Clone,
    material: &Material,
) -> Result<Vec<EndgameTables>, GenError> {
    Ok(tables::open_subs(dirs, material, None)?)
}

/// The sub-endgames a build or a check of `m` reads. A build by pawn structure keeps the
/// DTM its five-man sub-endgames work out by one ply in files in the table directory: for
/// KRPPKP those memos alone would take 25 GiB of memory.
fn open_build_subs(m: &Material, opts: &GenOptions) -> Result<Vec<EndgameTables>, GenError> {
    let memo_dir = uses_structures(m, opts).then_some(opts.dir.as_path());
    Ok(tables::open_subs(opts.dirs(), m, memo_dir)?)
}

/// Builds every endgame of `plan(targets)` that is missing (or all with `force`); calls
/// `report` after each.
pub fn gentb(
    targets: &[Material],
    opts: &GenOptions,
    report: &mut dyn FnMut(&TableSummary),
) -> Result<Vec<TableSummary>, GenError> {
    let wanted: Vec<Material> = targets.iter().map(|m| m.canonical().0).collect();
    let mut all = Vec::new();
    for m in plan(targets) {
        let s = build_or_keep(&m, opts, wanted.contains(&m))?;
        report(&s);
        all.push(s);
    }
    Ok(all)
}

/// Must `m` be built: absent from all of `opts`'s directories, or named with `force`
/// (sub-endgames are rebuilt only when named)?
pub fn needs_build(m: &Material, opts: &GenOptions, named: bool) -> bool {
    (opts.force && named) || find_tables(opts, m).is_none()
}

/// Builds `m` if `needs_build` says so, else reports it kept.
pub fn build_or_keep(
    m: &Material,
    opts: &GenOptions,
    named: bool,
) -> Result<TableSummary, GenError> {
    if needs_build(m, opts, named) {
        build_endgame(m, opts)
    } else {
        Ok(TableSummary::kept(*m))
    }
}

/// Shows a table's passes on `bar` (solves, then verification): entries done out of `total`.
pub fn progress_style(bar: &ProgressBar, total: u64) {
    bar.set_length(total);
    bar.set_position(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:<24} [{bar:30}] {human_pos}/{human_len} entries, eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
}

/// Sharing the DTM and DTZ init passes keeps DTZ's start (3 bytes an entry) beside DTM's
/// arrays, so it is done only when 6 bytes an entry fit in this. KNNKP (396 M entries) built
/// with sharing peaked at 3,948 MiB, too near the 4 GiB goal: it and larger endgames keep two
/// passes; KBBKN (166 M) and the 4-man tables share.
const SHARED_INIT_BYTES: u64 = 2 << 30;

/// Builds (and verifies, if asked) one endgame whose sub-endgames are present in `opts.dir`.
pub fn build_endgame(material: &Material, opts: &GenOptions) -> Result<TableSummary, GenError> {
    let m = material.canonical().0;
    check_resources(&m, opts)?;
    reset_peak_memory();
    let anon = AnonPeak::start();
    let start = Instant::now();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    let mut opened = open_build_subs(&m, opts)?;
    // The values solver reads its sub-endgames' results and mates at random, many times each:
    // held decompressed where memory allows beside its arrays, rather than decompressed again
    // block by block (zstd) as the block cache loses them.
    let held: u64 = opened
        .iter()
        .map(EndgameTables::results_and_dtm_bytes)
        .sum();
    let solver_bytes = if uses_structures(&m, opts) {
        structures::memory_bytes(&m)
    } else {
        values_solver_bytes(&layout)
    };
    if !uses_bitmaps(&m, opts) && crate::memory::check(solver_bytes + held).is_ok() {
        for t in &mut opened {
            t.hold_results_and_dtm()?;
        }
    }
    let subs = SubTables::new(&m, opened);
    let staging = Staging::new(&opts.dir).map_err(|e| GenError::Io(opts.dir.clone(), e))?;
    let out = staging.dir();
    let total: u64 = Half::BOTH.iter().map(|&h| layout.size(h)).sum();
    let bar = &opts.progress;
    progress_style(bar, total);
    let progress = |label: String| {
        bar.set_position(0);
        move |pass: u32, resolved: u64| {
            bar.set_message(format!("{label} pass {pass}"));
            bar.set_position(resolved);
        }
    };
    if uses_bitmaps(&m, opts) {
        let (halves, split_seconds, dtz50_method) =
            build_by_bitmaps(&m, &subs, out, &layout, opts, &progress)?;
        return finish(
            m,
            opts,
            staging,
            &subs,
            start,
            anon,
            halves,
            split_seconds,
            dtz50_method,
        );
    }
    if uses_structures(&m, opts) {
        let solved = build_by_structures(&m, &subs, out, &index, opts)?;
        let (halves, split_seconds, dtz50_method) = solved;
        let work = structures::work_dir(&opts.dir, &m);
        let summary = finish(
            m,
            opts,
            staging,
            &subs,
            start,
            anon,
            halves,
            split_seconds,
            dtz50_method,
        );
        // Published: the units are no longer needed. A build that failed keeps them, so that
        // the next one only puts the tables together again.
        if summary.is_ok() {
            std::fs::remove_dir_all(&work).map_err(|e| GenError::Io(work, e))?;
        }
        return summary;
    }
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
    } else if dtz_max <= crate::egtb::format::plies::RULE50_PLIES {
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
    bar.set_message(format!("{m} wdl"));
    let scan = finish::write_wdl(out, &m)?;
    finish::finish_zeroing(out, &m, m.men() <= finish::ONE_SIDE_MAX_MEN, &scan)?;
    finish(
        m,
        opts,
        staging,
        &subs,
        start,
        anon,
        halves,
        split_seconds,
        dtz50_method,
    )
}

/// Verifies (if asked) and publishes the tables built in `staging`, and sums the build up.
#[allow(clippy::too_many_arguments)]
fn finish(
    m: Material,
    opts: &GenOptions,
    staging: Staging,
    subs: &SubTables,
    start: Instant,
    anon: AnonPeak,
    halves: [Option<HalfSummary>; 2],
    split_seconds: [f64; 2],
    dtz50_method: Dtz50Method,
) -> Result<TableSummary, GenError> {
    let out = staging.dir();
    let bar = &opts.progress;
    let seconds = start.elapsed().as_secs_f64();
    let peak_bytes = peak_memory_bytes();
    reset_peak_memory();
    let peak_anon = anon.finish();
    let anon = AnonPeak::start();

    let (verify, verify_seconds) = if opts.verify {
        let t = Instant::now();
        bar.set_message(format!("{m} verify"));
        let r = verify_tables(out, &m, &subs.tables, bar)?;
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
    staging
        .publish(&opts.dir, &m)
        .map_err(|(p, e)| GenError::Io(p, e))?;
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

/// What the solves of a build give `finish`: the summary per half, the seconds of DTM and of
/// DTZ, and how DTZ50 was found.
type Solved = ([Option<HalfSummary>; 2], [f64; 2], Dtz50Method);

/// Builds the three tables of the pawnless endgame `m` with the bitmap solver into `out`
/// (`bitmaps`): DTM, DTZ and, where the rule needs it, DTZ50 solved one after the other, then
/// their values put together, summed up and written into the four files block by block.
fn build_by_bitmaps<P: Fn(u32, u64) + Sync>(
    m: &Material,
    subs: &SubTables,
    out: &Path,
    layout: &Layout,
    opts: &GenOptions,
    progress: &dyn Fn(String) -> P,
) -> Result<Solved, GenError> {
    let start = Instant::now();
    let index = layout.nalimov();
    let solve = |metric: Metric,
                 earlier: Option<&bitmaps::Resolved>|
     -> Result<bitmaps::Resolved, GenError> {
        let on_pass = progress(format!("{m} {}", metric.name()));
        let solver = bitmaps::BitmapSolver {
            layout,
            subs,
            material: *m,
            metric,
            earlier,
            counting: opts.counting,
            pulling: opts.pulling,
            pass_times: opts.pass_times.as_ref(),
        };
        solver.solve(&out.join(format!(".{}.log", metric.name())), &on_pass)
    };
    // The three solves first, their depths logged to disk; then one scan puts the values of
    // all three metrics together. Each solve takes the arrays of the one before it again
    // (`memory::Recycling`).
    let recycling = crate::memory::Recycling::begin();
    let dtm = solve(Metric::Dtm, None)?;
    let dtm_seconds = start.elapsed().as_secs_f64();
    let dtz = solve(Metric::Dtz, Some(&dtm))?;
    let split_seconds = [dtm_seconds, start.elapsed().as_secs_f64() - dtm_seconds];
    let clean = subs.rule50_clean();
    let method = if opts.full_dtz50 {
        Dtz50Method::Solved
    } else if clean && dtz.deepest() <= crate::egtb::format::plies::RULE50_PLIES {
        Dtz50Method::SameAsDtz
    } else if clean {
        Dtz50Method::DtzCapped
    } else {
        Dtz50Method::Solved
    };
    let dtz50 = match method {
        Dtz50Method::Solved => Some(solve(Metric::Dtz50, Some(&dtm))?),
        _ => None,
    };
    drop(recycling);
    // DTZ50 has values of its own only when it was solved; otherwise it is DTZ, or DTZ capped
    // at the rule.
    let capped = method == Dtz50Method::DtzCapped;
    let dtz50_of = |v: TbValue| {
        if capped {
            solve::capped_at_rule50_value(v)
        } else {
            v
        }
    };
    // The files are written in their final form as the values are put together: the results
    // (WDL), and the distances depth-coded beside them. Writing DTZ and DTZ50 first as values
    // and then reading them back for the WDL file and the depth-coded ones (as `write_compact`
    // does for the values solver) compressed each twice and read it three times more.
    let mut files = FinalFiles::create(
        out,
        m,
        index,
        [
            dtm.max_raw(Metric::Dtm, |v| v),
            dtz.max_raw(Metric::Dtz, |v| v),
            match &dtz50 {
                Some(r) => r.max_raw(Metric::Dtz50, |v| v),
                None => dtz.max_raw(Metric::Dtz, dtz50_of),
            },
        ],
    )?;
    let mut parts = vec![
        bitmaps::Assembly {
            resolved: &dtm,
            metric: Metric::Dtm,
        },
        bitmaps::Assembly {
            resolved: &dtz,
            metric: Metric::Dtz,
        },
    ];
    if let Some(resolved) = &dtz50 {
        parts.push(bitmaps::Assembly {
            resolved,
            metric: Metric::Dtz50,
        });
    }
    let mut capped_values = Vec::new();
    let log_err = |e| GenError::Io(out.to_path_buf(), e);
    bitmaps::assemble(layout, &parts, log_err, |h, values| {
        let (dtm, dtz) = (values[0], values[1]);
        let dtz50 = match values.get(2) {
            Some(v) => *v,
            None if !capped => dtz,
            None => {
                capped_values.clear();
                capped_values.par_extend(dtz.par_iter().map(|&v| dtz50_of(v)));
                &capped_values[..]
            }
        };
        files.push(h, dtm, dtz, dtz50)
    })?;
    let halves = files.finish()?;
    if m.men() <= finish::ONE_SIDE_MAX_MEN {
        finish::keep_one_side(&EndgameTables::open(out, m)?, out)?;
    }
    Ok((halves, split_seconds, method))
}

/// Builds the three tables of the endgame with pawns `m` one pawn structure at a time
/// (`structures`) into `out`: its units in a directory beside the tables, kept until the
/// build is published, so that a stopped build goes on from the units done.
fn build_by_structures(
    m: &Material,
    subs: &SubTables,
    out: &Path,
    index: &EndgameIndex,
    opts: &GenOptions,
) -> Result<Solved, GenError> {
    let start = Instant::now();
    let bar = &opts.progress;
    let on_unit = |n: usize, of: usize| {
        bar.set_message(format!("{m} unit {n}/{of}"));
    };
    let work = structures::work_dir(&opts.dir, m);
    let times = structures::solve_units(index, subs, opts.full_dtz50, &work, &on_unit)
        .map_err(|e| GenError::Io(work.clone(), e))?;
    bar.set_message(format!("{m} writing"));
    let t = Instant::now();
    let halves = structures::write_files(out, index, &work)?;
    if let Some(sink) = &opts.pass_times {
        sink.report(&SolveTimes::ByStructure {
            material: *m,
            steps: vec![
                ("dtm", times.dtm),
                ("dtz", times.dtz),
                ("dtz50", times.dtz50),
                ("unit files", times.files),
                ("tables", t.elapsed().as_secs_f64()),
            ],
        });
    }
    if m.men() <= finish::ONE_SIDE_MAX_MEN {
        finish::keep_one_side(&EndgameTables::open(out, m)?, out)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok((
        halves,
        [seconds - times.dtz, times.dtz],
        Dtz50Method::Solved,
    ))
}

/// Is `m` solved one pawn structure at a time (`structures`)? Endgames with pawns of six men
/// always, smaller ones when asked.
pub fn uses_structures(m: &Material, opts: &GenOptions) -> bool {
    m.has_pawns() && (opts.structures || m.men() >= 6)
}

/// Memory of the solver of `solve` (a value and a counter per entry, copies while the files are
/// written): KRPKB (5 men) peaked at 3.7 GiB, about 4.6 bytes an entry of the layout.
fn values_solver_bytes(layout: &Layout) -> u64 {
    Half::BOTH.iter().map(|&h| layout.size(h) * 5).sum()
}

/// Is `m` solved in bitmaps (`bitmaps`) rather than in values (`solve`)? Pawnless endgames of six
/// men always (KBBKNN in values took about 18 GB, the largest would take 150 GB), smaller ones
/// when asked or when their values do not fit in memory: in values they build faster (KBBKN:
/// 20.9 s against 27.9 s, 2 threads, measured with `gentb --bitmaps`).
/// Pawn endgames keep the values solver, which solves DTZ50 by pawn level.
pub fn uses_bitmaps(m: &Material, opts: &GenOptions) -> bool {
    if m.has_pawns() {
        return false;
    }
    if opts.bitmaps || m.men() >= 6 {
        return true;
    }
    let layout_index = EndgameIndex::new(m);
    crate::memory::check(values_solver_bytes(&Layout::new(&layout_index))).is_err()
}

/// Memory and disk (bytes) a build of `m` needs at most while it runs (estimates:
/// `bitmaps::memory_bytes`, `structures::memory_bytes`, `disk_bytes`).
pub fn build_needs(m: &Material, opts: &GenOptions) -> (u64, u64) {
    let m = m.canonical().0;
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
    if uses_structures(&m, opts) {
        (
            structures::memory_bytes(&m),
            disk_bytes(&index, true) + structures::memo_bytes(&m),
        )
    } else if uses_bitmaps(&m, opts) {
        (bitmaps::memory_bytes(&layout, &m), disk_bytes(&index, true))
    } else {
        (values_solver_bytes(&layout), disk_bytes(&index, false))
    }
}

/// Refuses, before anything is started, a build of `m` into `dir` that the memory or the disk
/// present cannot hold (`build_needs`).
pub fn check_resources(m: &Material, opts: &GenOptions) -> Result<(), GenError> {
    let m = m.canonical().0;
    let dir = opts.dir.as_path();
    let refuse = |what: String| GenError::Resources {
        endgame: m.to_string(),
        what,
    };
    let (memory, disk) = build_needs(&m, opts);
    crate::memory::check(memory).map_err(|e| refuse(format!("memory: {e}")))?;
    let free = fs4::available_space(dir).map_err(|e| GenError::Io(dir.to_path_buf(), e))?;
    if disk > free {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(refuse(format!(
            "disk: about {:.1} GiB needed in {}, {:.1} GiB free",
            gib(disk),
            dir.display(),
            gib(free)
        )));
    }
    Ok(())
}

/// Disk a build of `index` needs at most at once: the depth logs of a bitmap build (under 1
/// byte an entry for the three: KBBKNN's took 0.27), the quiet-move counts of one half kept
/// from DTM's solve for the later ones (`move_counts`: half a byte an entry of that half's
/// live king placements, KQRKBN's 3.7 GiB, 0.37 byte an index entry) and the three files
/// written as the values are put together (KRBKNN's, with two bytes a value in DTM and DTZ:
/// 1.4 bytes an entry). The values solver leaves DTZ and DTZ50 uncompressed until the WDL file
/// is written (`write_compact`): up to two bytes a value each, beside the compressed files.
/// A build by pawn structure keeps its units compressed beside the files it writes (KRPKR's:
/// 42-45 MB a unit of 2^26 entries) and is counted as a bitmap build (`block_wise`), plus its
/// sub-endgames' DTM memos (`structures::memo_bytes`).
fn disk_bytes(index: &EndgameIndex, block_wise: bool) -> u64 {
    let entries: u64 = index.stored_halves().iter().map(|&h| index.size(h)).sum();
    entries * if block_wise { 3 } else { 5 }
}

/// Block cache per thread when a table is verified without being held decompressed.
const VERIFY_CACHE_BYTES: usize = 1 << 30;

fn verify_tables(
    dir: &Path,
    m: &Material,
    subs: &[EndgameTables],
    bar: &ProgressBar,
) -> Result<VerifyReport, GenError> {
    // Every entry is read once per predecessor: a table of up to five men is held decompressed
    // when its three files fit in memory (two bytes an entry each at most); a six-man one
    // (KBBKNN: 16 GB decompressed) is checked half by half, with the entries its moves lead to
    // packed in four bytes each (`verify::verify_by_halves`); where even that does not fit, it
    // is read through a larger block cache. The entries checked and the sub-tables are read
    // through the block cache in the last two.
    let index = EndgameIndex::new(m);
    let entries: u64 = index.stored_halves().iter().map(|&h| index.size(h)).sum();
    if m.men() <= 5 && crate::memory::check(entries * 2 * 3).is_ok() {
        let own = EndgameTables::open_loaded(dir, m)?;
        return Ok(verify::verify(&own, subs, bar));
    }
    let own = EndgameTables::open(dir, m)?;
    let before = crate::egtb::cache_bytes();
    crate::egtb::set_cache_bytes(before.max(VERIFY_CACHE_BYTES));
    let checkpoint = dir.join(format!(".{m}.verify"));
    let report = match verify::verify_by_halves(&own, subs, bar, &checkpoint) {
        Ok(Some(r)) => r,
        Ok(None) => verify::verify(&own, subs, bar),
        Err(e) if e.kind() == std::io::ErrorKind::OutOfMemory => verify::verify(&own, subs, bar),
        Err(e) => {
            crate::egtb::set_cache_bytes(before);
            return Err(GenError::Io(checkpoint, e));
        }
    };
    crate::egtb::set_cache_bytes(before);
    Ok(report)
}

/// `engine gentb --verify`: checks the tables of `material` present in `opts.dir` against their
/// successors (sub-tables from any of `opts`'s directories).
pub fn verify_endgame(opts: &GenOptions, material: &Material) -> Result<VerifyReport, GenError> {
    let m = material.canonical().0;
    let subs = open_build_subs(&m, opts)?;
    opts.progress.set_message(format!("{m} verify"));
    verify_tables(&opts.dir, &m, &subs, &opts.progress)
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
    // DTZ50 is stored as its differences from DTZ, which is written first.
    for &metric in metrics {
        write_compact(dir, m, metric, &halves)?;
    }
    Ok(())
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
                .map(|_| AtomicU16::new(solve::RESOLVED | crate::egtb::format::plies::CODE_NONE))
                .collect()
        });
        let src = works.map(|w| w[h as usize].as_ref().expect("both halves worked"));
        let size = layout.size(h);
        (0..size.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            let mut frames = FrameCache::default();
            for idx in c * CHUNK..((c + 1) * CHUNK).min(size) {
                let codes = src.map(|s| s[idx as usize].load(Relaxed));
                if codes[0] & !solve::RESOLVED == crate::egtb::format::plies::CODE_NONE {
                    continue; // broken
                }
                let pos = layout.decode_valid(h, idx);
                layout.nalimov_entries(h, idx, &pos, &mut frames, |i| {
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
