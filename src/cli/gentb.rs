//! `engine gentb`: build, verify (`--verify`) or benchmark (`--bench`) tables, with a progress
//! display over the whole run (table k of N, an estimate of the time left) and over each table's
//! passes and verification.

use crate::egtb::generate::plan::{entries, here, simulate, Plan};
use crate::egtb::generate::recompress::endgames_in;
use crate::egtb::generate::{
    build_endgame, build_or_keep, check_resources, needs_build, plan, progress_style, table8,
    verify_endgame, Counting, GenError, GenOptions, Pulling, SolveTimes, TableSummary, TimesSink,
};
use crate::egtb::material::Material;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct GentbArgs {
    /// Endgames to build, e.g. KQKR KRPKR (either colouring), with every sub-endgame they need.
    pub endgames: Vec<String>,
    /// Build every endgame of 3 to N men (kings included). On 2 cores: N=4, 35 tables, about
    /// 2.5 min and 39 MB; N=5, 145 tables, about 3 h of generation and 5 h of verification,
    /// about 6 GB of disk, at most 4.5 GiB of memory; N=6: see `--plan`.
    #[arg(long, value_parser = clap::value_parser!(u8).range(3..=7))]
    pub men: Option<u8>,
    /// Only the endgames without pawns of those named or given by --men.
    #[arg(long)]
    pub pawnless: bool,
    /// Print the plan of the run instead of running it: its endgames in order with their
    /// solvers and units of work, what is done, and the time, disk and memory left, estimated
    /// from the builds recorded in the directory (`gentb.plan`) or from reference builds.
    #[arg(long, conflicts_with_all = ["verify", "bench", "recompress"])]
    pub plan: bool,
    /// With --plan: how long the units left would take on each of these numbers of machines
    /// (e.g. 1,4,16,64), each running one unit at a time with all its cores, simulated from
    /// the plan's estimates.
    #[arg(long, requires = "plan", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub machines: Vec<u32>,
    /// Run as one process of an MPI job (`mpirun --enable-recovery -np N engine gentb --mpi
    /// ...`, the table directory shared by every machine): rank 0 hands out the endgames,
    /// the other ranks build and verify them. Needs an engine built with `--features mpi`.
    #[arg(long, conflicts_with_all = ["plan", "verify", "bench", "recompress"])]
    pub mpi: bool,
    /// With --mpi: seconds a building worker may stay silent before rank 0 takes it for dead
    /// and hands its endgame to another (a worker reports every second).
    #[arg(long, requires = "mpi", default_value_t = 30, value_parser = clap::value_parser!(u64).range(2..))]
    pub silence: u64,
    /// Builds at once, each with its share of the threads, as their sub-endgames are done and
    /// while the memory they need fits (on 2 cores two builds of one thread each take as long
    /// as one after the other with two).
    #[arg(long, default_value_t = 1, conflicts_with = "mpi", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,
    /// Directory of the table files (default: the engine's table directory). Created if
    /// missing.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Rebuild the named endgames even if their tables are present and valid.
    #[arg(long)]
    pub force: bool,
    /// Only verify the named endgames' present tables.
    #[arg(long)]
    pub verify: bool,
    /// Do not verify the tables built (to verify them later with --verify).
    #[arg(long, conflicts_with = "verify")]
    pub no_verify: bool,
    /// Solve pawnless endgames in bitmaps, as six-man ones always are: about a sixth of the
    /// memory, about twice the time (for benchmarks and comparisons).
    #[arg(long)]
    pub bitmaps: bool,
    /// Solve endgames with pawns one pawn structure at a time, as six-man ones always are
    /// (for benchmarks and comparisons).
    #[arg(long)]
    pub structures: bool,
    /// Solve in bitmaps without un-move counters, by Thompson's checks alone (for
    /// comparisons).
    #[arg(long)]
    pub no_counters: bool,
    /// Solve in bitmaps finding every pass's wins by un-moves from its losses, never by the
    /// moves of the entries left open (for comparisons).
    #[arg(long)]
    pub no_pull: bool,
    /// Print each pass of a bitmap solve to standard error: the losses and open entries that
    /// chose between pulling and pushing, and the seconds of each step (for tuning).
    #[arg(long)]
    pub pass_times: bool,
    /// Time the named endgames (default: the benchmark set) with 1 and 2 threads.
    #[arg(long, conflicts_with_all = ["verify", "men"])]
    pub bench: bool,
    /// Rewrite the tables present in the directory (or the named endgames) in the current
    /// file format, every entry checked before the old files are replaced.
    #[arg(long, conflicts_with_all = ["verify", "no_verify", "bench", "men", "force"])]
    pub recompress: bool,
}

/// The endgames `--bench` times when none are named.
pub const BENCH_SET: [&str; 6] = ["KRPKR", "KQPKQ", "KBNKN", "KRBKR", "KPPKP", "KNNKP"];

fn targets(args: &GentbArgs) -> Result<Vec<Material>, GenError> {
    let mut out = Vec::new();
    for name in &args.endgames {
        out.push(Material::parse(name)?.canonical().0);
    }
    if let Some(n) = args.men {
        out.extend(Material::all_up_to(n).into_iter().filter(|m| m.men() > 2));
    }
    if args.pawnless {
        out.retain(|m| !m.has_pawns());
    }
    Ok(out)
}

fn pool(threads: Option<u16>) -> Result<rayon::ThreadPool, GenError> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        builder = builder.num_threads(t.into());
    }
    builder
        .build()
        .map_err(|e| GenError::Io(PathBuf::from("thread pool"), std::io::Error::other(e)))
}

/// The progress display: one bar for the run, one for each table at work. Drawn on a terminal
/// only; elsewhere each table's start is a line on standard error.
struct Progress {
    multi: MultiProgress,
    run: ProgressBar,
    table: ProgressBar,
    drawn: bool,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let drawn = std::io::stderr().is_terminal();
        let multi = MultiProgress::with_draw_target(if drawn {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let run = multi.add(ProgressBar::new(total));
        run.set_style(
            ProgressStyle::with_template(
                "{msg:<24} [{bar:30}] {percent:>3}% of the entries, {elapsed} so far, about {eta} left",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        let table = multi.add(ProgressBar::new(0));
        progress_style(&table, 0);
        Progress {
            multi,
            run,
            table,
            drawn,
        }
    }

    /// A bar of its own for one of the tables built at once.
    fn bar(&self) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(0));
        progress_style(&bar, 0);
        bar
    }

    fn start(&self, k: usize, n: usize, m: &Material, how: &str) {
        let what = format!("table {k} of {n}: {m}{how}");
        if !self.drawn {
            let left = if self.run.position() > 0 {
                format!(", about {} left", humantime(self.run.eta().as_secs()))
            } else {
                String::new()
            };
            eprintln!("gentb: {what}{left}");
        }
        self.run.set_message(what);
    }
}

/// `--plan`: the steps left, one line each, the totals and the rates they come from.
fn print_plan(plan: &Plan, dir: &std::path::Path) {
    let gb = |b: f64| b / 1e9;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let present = plan.steps.iter().filter(|st| st.present).count();
    let left: Vec<_> = plan.steps.iter().filter(|st| !st.present).collect();
    let units: usize = left.iter().map(|st| st.units - st.units_done).sum();
    println!(
        "plan of {} endgames in {}: {present} present, {} left in {units} units of work",
        plan.steps.len(),
        dir.display(),
        left.len()
    );
    let rates = plan.rates();
    if !left.is_empty() {
        println!(
            "{:>5}  {:<8} {:<10} {:>15} {:>11} {:>11} {:>11} {:>9} {:>11} {:>9}",
            "order",
            "endgame",
            "solver",
            "entries",
            "units done",
            "generation",
            "verify",
            "files",
            "memory",
            "disk"
        );
    }
    for (k, st) in plan.steps.iter().enumerate().filter(|(_, st)| !st.present) {
        let c = st.cost(&rates);
        println!(
            "{:>5}  {:<8} {:<10} {:>15} {:>11} {:>11} {:>11} {:>6.2} GB {:>7.1} GiB {:>6.1} GB",
            k + 1,
            st.endgame.to_string(),
            st.solver.name(),
            st.entries,
            format!("{}/{}", st.units_done, st.units),
            humantime(c.generation as u64),
            humantime(c.verification as u64),
            gb(c.bytes),
            gib(st.memory),
            gb(st.disk as f64),
        );
    }
    let all = plan.left(&rates);
    let most =
        |f: fn(&&crate::egtb::generate::plan::Step) -> u64| left.iter().map(f).max().unwrap_or(0);
    println!(
        "left: about {} of generation and {} of verification, {:.1} GB of files; one build needs at most {:.1} GiB of memory and {:.1} GB of free disk while it runs",
        humantime(all.generation as u64),
        humantime(all.verification as u64),
        gb(all.bytes),
        gib(most(|st| st.memory)),
        gb(most(|st| st.disk) as f64),
    );
    if let Ok(free) = fs4::available_space(dir) {
        println!("free disk in {}: {:.1} GB", dir.display(), gb(free as f64));
    }
    println!("estimated from, an index entry (both stored halves):");
    for r in &rates {
        println!(
            "  {}: generation {:.3} us, verification {:.3} us, files {:.3} bytes; {}",
            r.solver.name(),
            r.generation * 1e6,
            r.verification * 1e6,
            r.bytes,
            r.basis
        );
    }
}

/// `--machines`: the plan's units run on each number of machines, simulated.
fn print_simulation(plan: &Plan, machines: &[u32]) {
    if machines.is_empty() {
        return;
    }
    let jobs = plan.jobs(&plan.rates());
    println!(
        "simulated on N machines, {} units of work (each machine one unit at a time with its cores, at the rates above):",
        jobs.iter().filter(|j| j.seconds > 0.0).count()
    );
    for &n in machines {
        let s = simulate(&jobs, n as usize);
        println!(
            "  N = {n}: {} (lower bounds: the longest chain of units {}, the work shared {}); machines busy {:.0}%",
            humantime(s.finish as u64),
            humantime(s.chain as u64),
            humantime(s.shared as u64),
            100.0 * s.busy()
        );
    }
}

fn humantime(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

pub fn run(args: &GentbArgs) -> Result<(), GenError> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(crate::egtb::play::probe::default_dir);
    std::fs::create_dir_all(&dir).map_err(|e| GenError::Io(dir.clone(), e))?;
    let opts = GenOptions {
        force: args.force,
        verify: !args.no_verify,
        bitmaps: args.bitmaps,
        structures: args.structures,
        counting: if args.no_counters {
            Counting::Off
        } else {
            Counting::WhereMemoryAllows
        },
        pulling: if args.no_pull {
            Pulling::Never
        } else {
            Pulling::Chosen
        },
        pass_times: args
            .pass_times
            .then(|| TimesSink(std::sync::Arc::new(|t: &SolveTimes| eprintln!("{t}")))),
        ..GenOptions::new(&dir)
    };
    if args.bench {
        return bench(args, &opts);
    }
    if args.recompress {
        return pool(args.threads)?.install(|| recompress(args, &dir));
    }
    let list = targets(args)?;
    if list.is_empty() {
        return Err(GenError::Usage(
            "name endgames (e.g. KQKR) or give --men N".into(),
        ));
    }
    #[cfg(feature = "mpi")]
    let mpi = match args.mpi {
        true => Some(crate::egtb::generate::plan::distribute::Mpi::init()?),
        false => None,
    };
    #[cfg(not(feature = "mpi"))]
    if args.mpi {
        return Err(GenError::Usage(
            "this engine was built without MPI: build it with `cargo build --release --features \
             mpi` (Open MPI and libclang needed)"
                .into(),
        ));
    }
    let pool = pool(args.threads)?;
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi.as_ref().filter(|m| m.rank() != 0) {
        return mpi.work(&opts, pool);
    }
    if args.verify {
        let mut plan = Plan::new(&list, &opts)?;
        return verify(&list, &opts, &pool, &mut plan);
    }
    let mut plan = Plan::new(&list, &opts)?;
    if args.plan {
        print_plan(&plan, &opts.dir);
        print_simulation(&plan, &args.machines);
        return Ok(());
    }
    let order: Vec<Material> = plan.steps.iter().map(|st| st.endgame).collect();
    // The run's bar counts entries of the tables to build. Which ones is decided once: a
    // present table is found by opening it, which reads it whole for its checksum.
    let missing: Vec<bool> = order
        .iter()
        .map(|m| needs_build(m, &opts, list.contains(m)))
        .collect();
    // Refused up front: a build the machine cannot hold must not fail after hours of others.
    for (m, _) in order.iter().zip(&missing).filter(|(_, &b)| b) {
        check_resources(m, &opts)?;
    }
    plan.write()?;
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi {
        let start = Instant::now();
        let silence = std::time::Duration::from_secs(args.silence);
        let built = mpi.coordinate(&mut plan, &missing, silence, &mut |s| println!("{s}"))?;
        println!(
            "{built} tables built, {} kept, {:.1} s in all",
            order.len() - built,
            start.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let progress = Progress::new(
        order
            .iter()
            .zip(&missing)
            .filter(|(_, &b)| b)
            .map(|(m, _)| entries(m))
            .sum(),
    );
    for (m, _) in order.iter().zip(&missing).filter(|(_, &b)| !b) {
        progress
            .run
            .suspend(|| println!("{}", TableSummary::kept(*m).line()));
    }
    let start = Instant::now();
    let threads = pool.current_num_threads();
    let done = here::run(
        &mut plan,
        &missing,
        &opts,
        threads,
        args.jobs.into(),
        &|| progress.bar(),
        &mut |e| match e {
            here::Event::Start(k, m, t) => {
                let on = if t == threads {
                    String::new()
                } else {
                    format!(" ({t} of {threads} threads)")
                };
                progress.start(k + 1, order.len(), &m, &on);
            }
            here::Event::Built(s) => {
                progress.run.inc(entries(&s.material));
                progress.run.suspend(|| println!("{}", s.line()));
            }
        },
    )?;
    progress.table.finish_and_clear();
    progress.run.finish_and_clear();
    let built = done.len();
    let verification = if opts.verify {
        let secs: f64 = done.iter().map(|s| s.verify_seconds).sum();
        format!("verification {secs:.1} s")
    } else {
        "not verified".to_string()
    };
    println!(
        "{built} tables built, {} kept, {:.1} s in all (generation {:.1} s, {verification})",
        order.len() - built,
        start.elapsed().as_secs_f64(),
        done.iter().map(|s| s.seconds).sum::<f64>(),
    );
    Ok(())
}

/// `--recompress`: converts the named endgames, or every one present; stops at the first
/// that fails.
fn recompress(args: &GentbArgs, dir: &std::path::Path) -> Result<(), GenError> {
    let list = if args.endgames.is_empty() {
        endgames_in(dir).map_err(|e| GenError::Io(dir.to_path_buf(), e))?
    } else {
        targets(args)?
    };
    let progress = Progress::new(list.iter().map(entries).sum());
    let start = Instant::now();
    let mut bytes = [0u64; 2];
    for (k, m) in list.iter().enumerate() {
        progress.start(k + 1, list.len(), m, "");
        let t = Instant::now();
        let done = crate::egtb::generate::recompress::recompress(dir, m)?;
        progress.run.inc(entries(m));
        let line = match done {
            None => format!("{m}: in the current format, kept"),
            Some(c) => {
                bytes[0] += c.bytes[0];
                bytes[1] += c.bytes[1];
                format!(
                    "{m}: {} -> {} bytes ({:.2} times the size), {} positions checked ({:.1} s)",
                    c.bytes[0],
                    c.bytes[1],
                    c.bytes[1] as f64 / c.bytes[0].max(1) as f64,
                    c.checked,
                    t.elapsed().as_secs_f64()
                )
            }
        };
        progress.run.suspend(|| println!("{line}"));
    }
    progress.run.finish_and_clear();
    println!(
        "{} endgames, {} -> {} bytes converted in {:.1} s",
        list.len(),
        bytes[0],
        bytes[1],
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `--verify`: checks each named endgame's present tables, recording the time of each sound one
/// in the plan's record; stops at the first that fails.
fn verify(
    list: &[Material],
    opts: &GenOptions,
    pool: &rayon::ThreadPool,
    plan: &mut Plan,
) -> Result<(), GenError> {
    let progress = Progress::new(list.iter().map(entries).sum());
    let opts = GenOptions {
        progress: progress.table.clone(),
        ..opts.clone()
    };
    for (k, m) in list.iter().enumerate() {
        progress.start(k + 1, list.len(), m, "");
        let t = Instant::now();
        let r = pool.install(|| verify_endgame(&opts, m))?;
        progress.run.inc(entries(m));
        progress.run.suspend(|| {
            let earlier = if r.earlier_seconds > 0.0 {
                format!(
                    ", and {:.2} s in earlier runs that were stopped",
                    r.earlier_seconds
                )
            } else {
                String::new()
            };
            println!(
                "{m}: {} positions checked, {} broken entries, {} disagreements ({:.2} s{earlier})",
                r.checked,
                r.broken,
                r.disagreements,
                t.elapsed().as_secs_f64()
            );
            for e in &r.examples {
                println!("  {e}");
            }
        });
        if r.disagreements > 0 {
            return Err(GenError::Verify {
                endgame: m.to_string(),
                report: r,
            });
        }
        plan.verified(m, t.elapsed().as_secs_f64() + r.earlier_seconds)?;
    }
    progress.table.finish_and_clear();
    progress.run.finish_and_clear();
    Ok(())
}

/// Times each endgame with 1 and 2 threads, or with `--threads N` only (sub-endgames built
/// first, not timed).
fn bench(args: &GentbArgs, opts: &GenOptions) -> Result<(), GenError> {
    let names: Vec<String> = if args.endgames.is_empty() {
        BENCH_SET.iter().map(|s| s.to_string()).collect()
    } else {
        args.endgames.clone()
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("gentb bench: {cores} cores available; times exclude sub-endgames and verification");
    for name in names {
        let m = Material::parse(&name)?.canonical().0;
        for sub in plan(&[m]).into_iter().filter(|s| *s != m) {
            build_or_keep(&sub, opts, false)?;
        }
        let counts: Vec<u16> = match args.threads {
            Some(t) => vec![t],
            None => vec![1, 2],
        };
        for &threads in &counts {
            let o = GenOptions {
                // Verified once, after the last timing.
                verify: opts.verify && threads == *counts.last().expect("one count at least"),
                ..opts.clone()
            };
            let s = pool(Some(threads))?.install(|| build_endgame(&m, &o))?;
            let mine = s.max_dtm();
            let agree = table8(&m).map_or("no Table 8 row".to_string(), |p| {
                if p == mine {
                    "max DTM = Table 8".to_string()
                } else {
                    format!("max DTM {mine:?} vs Table 8 {p:?}")
                }
            });
            println!(
                "{m:<6} threads {threads}: {:>7.1} s, {:>11} positions, {:>5.2} M pos/s, peak {} MiB (anonymous {} MiB), {agree}{}",
                s.seconds,
                s.positions(),
                s.positions() as f64 / s.seconds / 1e6,
                s.peak_bytes >> 20,
                s.peak_anon_bytes[0] >> 20,
                s.verify.as_ref().map_or(String::new(), |v| format!(
                    ", verified {} positions in {:.1} s: {} disagree",
                    v.checked, s.verify_seconds, v.disagreements
                )),
            );
        }
    }
    Ok(())
}
