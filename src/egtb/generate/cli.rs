//! The `engine gentb` command: build, verify (`--verify`) or benchmark (`--bench`) tables.
//! main.rs only parses the arguments into `GentbArgs`.

use super::{build_endgame, gentb, plan, verify_endgame, GenError, GenOptions, TableSummary};
use crate::egtb::material::Material;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

pub struct GentbArgs {
    pub endgames: Vec<String>,
    pub men: Option<u8>,
    pub dir: PathBuf,
    pub threads: Option<usize>,
    pub force: bool,
    pub verify: bool,
    pub no_verify: bool,
    pub bench: bool,
}

/// The endgames `--bench` times when none are named.
pub const BENCH_SET: [&str; 6] = ["KRPKR", "KQPKQ", "KBNKN", "KRBKR", "KPPKP", "KNNKP"];

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

/// The same four figures from a built table's summary.
pub fn max_dtm_of(s: &TableSummary) -> [Option<u16>; 4] {
    let h = |i: usize| s.halves[i].as_ref().or(s.halves[1].as_ref());
    let (w, b) = (h(0), h(1));
    if s.material.is_symmetric() {
        // Only Btm is stored; Wtm is its colour-flipped image.
        let b = b.expect("btm stored");
        return [b.max_dtm_win, b.max_dtm_loss, b.max_dtm_loss, b.max_dtm_win];
    }
    let (w, b) = (w.expect("wtm"), b.expect("btm"));
    [w.max_dtm_win, b.max_dtm_loss, w.max_dtm_loss, b.max_dtm_win]
}

fn targets(args: &GentbArgs) -> Result<Vec<Material>, GenError> {
    let mut out = Vec::new();
    for name in &args.endgames {
        out.push(Material::parse(name)?.canonical().0);
    }
    if let Some(n) = args.men {
        out.extend(Material::all_up_to(n).into_iter().filter(|m| m.men() > 2));
    }
    Ok(out)
}

pub fn run(args: &GentbArgs) -> Result<(), GenError> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = args.threads {
        builder = builder.num_threads(t);
    }
    let pool = builder
        .build()
        .map_err(|e| GenError::Io(args.dir.clone(), std::io::Error::other(e)))?;
    let opts = GenOptions {
        dir: args.dir.clone(),
        force: args.force,
        progress: std::io::stderr().is_terminal(),
        verify: !args.no_verify,
        full_dtz50: false,
    };
    if args.bench {
        return bench(args, &opts);
    }
    let list = targets(args)?;
    if list.is_empty() {
        eprintln!("gentb: name endgames (e.g. KQKR) or give --men N");
        return Ok(());
    }
    if args.verify {
        for m in &list {
            let t = Instant::now();
            let r = pool.install(|| verify_endgame(&args.dir, m))?;
            println!(
                "{m}: {} positions checked, {} broken entries, {} disagreements ({:.2} s)",
                r.checked,
                r.broken,
                r.disagreements,
                t.elapsed().as_secs_f64()
            );
            for e in &r.examples {
                println!("  {e}");
            }
            if r.disagreements > 0 {
                return Err(GenError::Verify {
                    endgame: m.to_string(),
                    report: r,
                });
            }
        }
        return Ok(());
    }
    let start = Instant::now();
    let done = pool.install(|| gentb(&list, &opts, &mut |s| println!("{}", s.line())))?;
    let built = done.iter().filter(|s| s.built).count();
    let verification = if opts.verify {
        let secs: f64 = done.iter().map(|s| s.verify_seconds).sum();
        format!("verification {secs:.1} s")
    } else {
        "not verified".to_string()
    };
    println!(
        "{built} tables built, {} kept, {:.1} s in all (generation {:.1} s, {verification})",
        done.len() - built,
        start.elapsed().as_secs_f64(),
        done.iter().map(|s| s.seconds).sum::<f64>(),
    );
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
        let subs: Vec<Material> = plan(&[m]).into_iter().filter(|s| *s != m).collect();
        gentb(
            &subs,
            &GenOptions {
                force: false,
                ..opts.clone()
            },
            &mut |_| {},
        )?;
        let counts: Vec<usize> = match args.threads {
            Some(t) => vec![t],
            None => vec![1, 2],
        };
        for &threads in &counts {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| GenError::Io(args.dir.clone(), std::io::Error::other(e)))?;
            let o = GenOptions {
                // Verified once, after the last timing.
                verify: opts.verify && threads == *counts.last().expect("one count at least"),
                ..opts.clone()
            };
            let s = pool.install(|| build_endgame(&m, &o))?;
            let mine = max_dtm_of(&s);
            let paper = table8(&m);
            let agree = paper.map_or("no Table 8 row".to_string(), |p| {
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
