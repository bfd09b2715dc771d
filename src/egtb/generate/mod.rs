//! `engine gentb`: builds endgame tables (DTM, DTZ, DTZ50) by retrograde analysis, sub-endgames
//! first (Thompson 1996, Section 6: waves by number of men), writes them with `egtb::file` into
//! a staging directory (`egtb::staging`), verifies each one by forward minimax (`verify`) and
//! only then moves it into the table directory. The solver is in `solve`, the move and un-move
//! generators in `moves`, the working layout in `layout`, the report of a build in `summary`.

pub mod layout;
mod memory;
pub mod moves;
pub mod solve;
mod summary;
pub mod verify;

use crate::egtb::file::{write_compact, Metric, TableError, TbValue};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::{Material, MaterialError};
use crate::egtb::staging::Staging;
use crate::egtb::tables::EndgameTables;
use indicatif::{ProgressBar, ProgressStyle};
use layout::Layout;
pub use memory::peak_memory_bytes;
use memory::{reset_peak_memory, AnonPeak};
use rayon::prelude::*;
use solve::{wdl_of_work, Solver, Start, SubTables, Wdl, Work};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;
use summary::{summarise_dtm, summarise_dtz};
pub use summary::{table8, Dtz50Method, HalfSummary, TableSummary};
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
    Recompress(#[from] crate::egtb::recompress::RecompressError),
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

/// The first of `opts`'s directories that holds `m`'s three tables, valid.
pub fn find_tables(opts: &GenOptions, m: &Material) -> Option<PathBuf> {
    opts.dirs()
        .find(|d| EndgameTables::open(d, m).is_ok())
        .map(Path::to_path_buf)
}

/// Opens the sub-endgame tables of `material`, each from the first of `dirs` that has it.
fn open_subs<'a>(
    dirs: impl Iterator<Item = &'a Path> + Clone,
    material: &Material,
) -> Result<Vec<EndgameTables>, GenError> {
    material
        .sub_endgames()
        .iter()
        .filter(|m| m.men() > 2)
        .map(|m| {
            let mut first = None;
            for d in dirs.clone() {
                match EndgameTables::open(d, m) {
                    Ok(t) => return Ok(t),
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            Err(GenError::from(first.expect("at least one directory")))
        })
        .collect()
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
    reset_peak_memory();
    let anon = AnonPeak::start();
    let start = Instant::now();
    let subs = SubTables::new(&m, open_subs(opts.dirs(), &m)?);
    let staging = Staging::new(&opts.dir).map_err(|e| GenError::Io(opts.dir.clone(), e))?;
    let out = staging.dir();
    let index = EndgameIndex::new(&m);
    let layout = Layout::new(&index);
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

fn verify_tables(
    dir: &Path,
    m: &Material,
    subs: &[EndgameTables],
    bar: &ProgressBar,
) -> Result<VerifyReport, GenError> {
    // Every entry is read once per predecessor: the table checked is held decompressed.
    let own = EndgameTables::open_loaded(dir, m)?;
    Ok(verify::verify(&own, subs, bar))
}

/// `engine gentb --verify`: checks the tables of `material` present in `opts.dir` against their
/// successors (sub-tables from any of `opts`'s directories).
pub fn verify_endgame(opts: &GenOptions, material: &Material) -> Result<VerifyReport, GenError> {
    let m = material.canonical().0;
    let subs = open_subs(opts.dirs(), &m)?;
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
