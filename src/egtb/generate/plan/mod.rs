//! The plan of a `gentb` run: its endgames in build order (each after the sub-endgames it
//! reads), each one's solver and units of work (one, or for a build by pawn structure its
//! structures' units and the writing of its files), what is done, and the time and disk left,
//! estimated from costs per index entry. The record of what was built (seconds, threads, bytes
//! and payload checksum of each file) is kept beside the tables in `gentb.plan`, so that the
//! estimates use this machine's own costs once it has built enough tables of a kind, and so
//! that a stopped run's plan shows where it was. Until then they use the reference builds of
//! `REFERENCES`, measured with 2 threads on a 2-core machine (`docs/benchmarks.md`).

mod dispatch;
#[cfg(feature = "mpi")]
pub mod distribute;
pub mod here;
mod simulate;

use dispatch::Dispatch;
pub use simulate::{simulate, Job, Schedule};

use super::{build_needs, structures, uses_bitmaps, uses_structures, GenError, GenOptions};
use super::{EndgameIndex, TableSummary};
use crate::egtb::format::{file_name, Metric, TableFile};
use crate::egtb::material::Material;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The record's file name in the table directory.
const PLAN_FILE: &str = "gentb.plan";

/// The four files of an endgame, in the record's order.
const FILES: [Metric; 4] = [Metric::Dtm, Metric::Dtz, Metric::Dtz50, Metric::Wdl];

/// Measured costs of a kind are used once the records hold this many index entries of it:
/// below that a build's fixed costs (sub-tables opened, threads started) swamp the rate.
const MEASURED_ENTRIES: u64 = 100_000_000;

/// The endgames to build for `targets`, each after every sub-endgame it needs (bare kings
/// need no table).
pub fn order(targets: &[Material]) -> Vec<Material> {
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

/// Which solver builds an endgame (`uses_structures`, `uses_bitmaps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    Values,
    Bitmaps,
    Structures,
}

impl Solver {
    const ALL: [Solver; 3] = [Solver::Values, Solver::Bitmaps, Solver::Structures];

    pub fn of(m: &Material, opts: &GenOptions) -> Solver {
        if uses_structures(m, opts) {
            Solver::Structures
        } else if uses_bitmaps(m, opts) {
            Solver::Bitmaps
        } else {
            Solver::Values
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Solver::Values => "values",
            Solver::Bitmaps => "bitmaps",
            Solver::Structures => "structures",
        }
    }

    fn parse(s: &str) -> Option<Solver> {
        Solver::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Entries of both stored halves of `m`: what costs are counted per.
pub fn entries(m: &Material) -> u64 {
    let index = EndgameIndex::new(m);
    index.stored_halves().iter().map(|&h| index.size(h)).sum()
}

/// What building one endgame took.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub endgame: Material,
    pub solver: Solver,
    pub entries: u64,
    pub threads: usize,
    /// Seconds of generation, and of verification if the build was verified.
    pub generation: f64,
    pub verification: Option<f64>,
    /// Bytes and payload checksum (xxh3, as in the header) of the DTM, DTZ, DTZ50 and WDL files.
    pub files: [(u64, u64); 4],
}

impl Record {
    fn line(&self) -> String {
        let mut s = format!(
            "{}\t{}\t{}\t{}\t{:.1}\t{}",
            self.endgame,
            self.solver.name(),
            self.entries,
            self.threads,
            self.generation,
            self.verification
                .map_or("-".to_string(), |v| format!("{v:.1}"))
        );
        for (bytes, hash) in self.files {
            let _ = write!(s, "\t{bytes}:{hash:016x}");
        }
        s
    }

    /// Tab-separated fields of a record's line.
    const FIELDS: usize = 10;

    fn parse(line: &str) -> Option<Record> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != Record::FIELDS {
            return None;
        }
        let file = |s: &str| -> Option<(u64, u64)> {
            let (b, h) = s.split_once(':')?;
            Some((b.parse().ok()?, u64::from_str_radix(h, 16).ok()?))
        };
        Some(Record {
            endgame: Material::parse(f[0]).ok()?.canonical().0,
            solver: Solver::parse(f[1])?,
            entries: f[2].parse().ok()?,
            threads: f[3].parse().ok()?,
            generation: f[4].parse().ok()?,
            verification: match f[5] {
                "-" => None,
                v => Some(v.parse().ok()?),
            },
            files: [file(f[6])?, file(f[7])?, file(f[8])?, file(f[9])?],
        })
    }

    fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.0).sum()
    }
}

/// One endgame of a plan.
#[derive(Clone, Debug)]
pub struct Step {
    pub endgame: Material,
    pub solver: Solver,
    pub entries: u64,
    /// Units of work: 1, or a build by structure's units and the writing of its files.
    pub units: usize,
    pub units_done: usize,
    /// Its four files are in one of the run's directories.
    pub present: bool,
    /// Memory and disk its build needs at most while it runs (`build_needs`).
    pub memory: u64,
    pub disk: u64,
}

/// What a step left will take: seconds of generation (of its units not done) and of
/// verification, and bytes of its files.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    pub generation: f64,
    pub verification: f64,
    pub bytes: f64,
}

impl Step {
    /// Its cost at `rates` (nothing if it is present).
    pub fn cost(&self, rates: &[Rate]) -> Cost {
        if self.present {
            return Cost::default();
        }
        let r = Rate::of(rates, self.solver);
        let e = self.entries as f64;
        Cost {
            generation: r.generation * e * (1.0 - self.units_done as f64 / self.units as f64),
            verification: r.verification * e,
            bytes: r.bytes * e,
        }
    }
}

/// Costs per index entry of one solver, and what they come from.
#[derive(Clone, Debug)]
pub struct Rate {
    pub solver: Solver,
    /// Seconds of generation and of verification, bytes of the four files.
    pub generation: f64,
    pub verification: f64,
    pub bytes: f64,
    /// The builds the figures are taken from.
    pub basis: String,
}

impl Rate {
    /// The rate of `solver` among `rates` (`Plan::rates` gives one for every solver).
    fn of(rates: &[Rate], solver: Solver) -> &Rate {
        rates
            .iter()
            .find(|r| r.solver == solver)
            .expect("a rate for every solver")
    }
}

/// A reference build with 2 threads on a 2-core machine: endgame, solver, seconds of
/// generation, and of verification and the bytes of its four files where they were measured.
type Reference = (&'static str, Solver, f64, Option<f64>, Option<u64>);

/// The figures of `docs/benchmarks.md`, "The plan of a set" (its table says where each comes
/// from).
#[rustfmt::skip]
const REFERENCES: [Reference; 18] = [
    ("KRPKR", Solver::Values, 227.9, Some(391.0), Some(144_465_841)),
    ("KRBKR", Solver::Values, 39.2, Some(126.8), Some(15_842_819)),
    ("KQRKR", Solver::Values, 63.7, Some(119.5), Some(26_124_989)),
    ("KRRKR", Solver::Values, 35.6, None, Some(22_929_237)),
    ("KRNKR", Solver::Values, 40.0, None, Some(16_698_023)),
    ("KQPKQ", Solver::Values, 297.2, Some(315.0), None),
    ("KNNKP", Solver::Values, 139.0, Some(120.8), None),
    ("KPPKP", Solver::Values, 107.7, Some(69.5), None),
    ("KBBKN", Solver::Values, 25.8, Some(54.8), None),
    ("KBNKN", Solver::Values, 39.0, Some(128.1), None),
    ("KBBKNN", Solver::Bitmaps, 594.2, Some(1_484.9), Some(632_939_322)),
    ("KRBKNN", Solver::Bitmaps, 3_034.4, Some(3_358.3), Some(6_621_563_255)),
    ("KQRKBN", Solver::Bitmaps, 1_157.7, Some(9_367.0), Some(4_127_635_443)),
    ("KRRRKN", Solver::Bitmaps, 639.9, Some(825.0), None),
    ("KQQQKN", Solver::Bitmaps, 507.7, Some(651.1), None),
    ("KRRRKB", Solver::Bitmaps, 661.9, Some(906.0), None),
    ("KQQQKB", Solver::Bitmaps, 509.6, Some(634.7), None),
    ("KRPKR", Solver::Structures, 175.8, Some(402.6), Some(144_455_433)),
];

/// Of a build by structure's generation, the share of the writing of its tables from the
/// units' files, which waits for every unit: KRPKR's 18.4-18.9 s of 170-181 s.
const WRITING_SHARE: f64 = 0.1;

/// The plan of a run and the record of what was built in its directory.
pub struct Plan {
    dir: PathBuf,
    pub steps: Vec<Step>,
    /// Every endgame recorded in the directory, of this plan or not.
    records: Vec<Record>,
}

impl Plan {
    /// The plan for `targets` in `opts.dir`, with the record kept there (a damaged line of it is
    /// an error: a record that cannot be read must not be overwritten).
    pub fn new(targets: &[Material], opts: &GenOptions) -> Result<Plan, GenError> {
        let dir = opts.dir.clone();
        let records = read_records(&dir.join(PLAN_FILE))?;
        let mut steps = Vec::new();
        for m in order(targets) {
            let solver = Solver::of(&m, opts);
            let present = opts
                .dirs()
                .any(|d| FILES.iter().all(|&f| d.join(file_name(&m, f)).is_file()));
            let (units, units_done) = match solver {
                Solver::Structures => {
                    let (n, done) = structures::units_done(&dir, &m)
                        .map_err(|e| GenError::Io(structures::work_dir(&dir, &m), e))?;
                    (n + 1, if present { n + 1 } else { done })
                }
                _ => (1, usize::from(present)),
            };
            let (memory, disk) = build_needs(&m, opts);
            steps.push(Step {
                endgame: m,
                solver,
                entries: entries(&m),
                units,
                units_done,
                present,
                memory,
                disk,
            });
        }
        Ok(Plan {
            dir,
            steps,
            records,
        })
    }

    /// Records the build `s` of step `k` (its files in the plan's directory) and writes the
    /// plan's file.
    pub fn built(&mut self, k: usize, s: &TableSummary, threads: usize) -> Result<(), GenError> {
        let st = &self.steps[k];
        let record = Record {
            endgame: st.endgame,
            solver: st.solver,
            entries: st.entries,
            threads,
            generation: s.seconds,
            verification: s.verify.as_ref().map(|_| s.verify_seconds),
            files: files_of(&self.dir, &st.endgame)?,
        };
        self.record(k, record)
    }

    /// Records `r`, the build of step `k`, and writes the plan's file.
    fn record(&mut self, k: usize, r: Record) -> Result<(), GenError> {
        let st = &mut self.steps[k];
        st.present = true;
        st.units_done = st.units;
        self.records.retain(|x| x.endgame != r.endgame);
        self.records.push(r);
        self.write()
    }

    /// Records that `m`'s tables, built by a recorded run without verification, were verified
    /// in `seconds` (all its runs together), and writes the plan's file; an endgame the record
    /// does not hold is left out, since its generation was not timed.
    pub fn verified(&mut self, m: &Material, seconds: f64) -> Result<(), GenError> {
        let m = m.canonical().0;
        match self.records.iter_mut().find(|r| r.endgame == m) {
            Some(r) => r.verification = Some(seconds),
            None => return Ok(()),
        }
        self.write()
    }

    /// Writes the plan's file: every step in order with its state, then the records of
    /// endgames outside the plan; a new file renamed over the old one, so a kill leaves one or
    /// the other whole.
    pub fn write(&self) -> Result<(), GenError> {
        let mut text = String::from(
            "# engine gentb's plan and record of this directory (`engine gentb --plan` reads it)\n\
             # step: endgame solver entries units units_done\n\
             # built: endgame solver entries threads generation_s verification_s, then bytes:xxh3 \
             of the dtm, dtz, dtz50 and wdl files\n",
        );
        for st in &self.steps {
            let _ = writeln!(
                text,
                "step\t{}\t{}\t{}\t{}\t{}",
                st.endgame,
                st.solver.name(),
                st.entries,
                st.units,
                st.units_done
            );
        }
        for r in &self.records {
            let _ = writeln!(text, "built\t{}", r.line());
        }
        let path = self.dir.join(PLAN_FILE);
        let tmp = self.dir.join(format!("{PLAN_FILE}.new"));
        std::fs::write(&tmp, text).map_err(|e| GenError::Io(tmp.clone(), e))?;
        std::fs::rename(&tmp, &path).map_err(|e| GenError::Io(path, e))
    }

    /// Costs per entry of each solver: this directory's records of it where they hold
    /// `MEASURED_ENTRIES` entries or more (generation, verification and bytes apart), else the
    /// reference builds.
    pub fn rates(&self) -> Vec<Rate> {
        Solver::ALL
            .into_iter()
            .map(|solver| rate(solver, &self.records))
            .collect()
    }

    /// What the steps not done will take at `rates`, summed.
    pub fn left(&self, rates: &[Rate]) -> Cost {
        let mut out = Cost::default();
        for c in self.steps.iter().map(|st| st.cost(rates)) {
            out.generation += c.generation;
            out.verification += c.verification;
            out.bytes += c.bytes;
        }
        out
    }

    /// The units of work of the steps left, at `rates`, in an order that puts each after those
    /// it reads: an endgame after its sub-endgames; in a build by structure, each unit after
    /// the units of lower pawn levels (a pawn move only lowers the level), then the writing of
    /// the tables. An endgame's verification is part of its last unit: its dependents read its
    /// files once they are verified.
    pub fn jobs(&self, rates: &[Rate]) -> Vec<Job> {
        let mut jobs: Vec<Job> = Vec::new();
        let mut last: Vec<(Material, usize)> = Vec::new();
        for st in self.steps.iter().filter(|st| !st.present) {
            let cost = st.cost(rates);
            // The whole endgame's generation, the units done included: they are left out
            // below by their share.
            let generation = Rate::of(rates, st.solver).generation * st.entries as f64;
            let subs: Vec<usize> = st
                .endgame
                .sub_endgames()
                .iter()
                .filter_map(|s| last.iter().find(|(m, _)| m == s).map(|&(_, j)| j))
                .collect();
            if st.solver != Solver::Structures {
                jobs.push(Job {
                    seconds: cost.generation + cost.verification,
                    after: subs,
                });
            } else {
                // Units count their layouts' entries, more than the index's: each unit's
                // share of the endgame is its share of those. Units of one level read the
                // levels below: a level waits for a mark that stands for the whole level
                // before it.
                let sizes = structures::unit_sizes(&st.endgame);
                let layouts: u64 = sizes.iter().map(|&(_, e)| e).sum();
                let solve = generation * (1.0 - WRITING_SHARE) / layouts.max(1) as f64;
                let mut before = subs;
                let mut units: Vec<usize> = Vec::new();
                let mut level = None;
                for (n, (l, e)) in sizes.into_iter().enumerate() {
                    if level != Some(l) && !units.is_empty() {
                        jobs.push(Job {
                            seconds: 0.0,
                            after: std::mem::take(&mut units),
                        });
                        before = vec![jobs.len() - 1];
                    }
                    level = Some(l);
                    if n < st.units_done {
                        continue;
                    }
                    units.push(jobs.len());
                    jobs.push(Job {
                        seconds: solve * e as f64,
                        after: before.clone(),
                    });
                }
                units.extend(before);
                jobs.push(Job {
                    seconds: generation * WRITING_SHARE + cost.verification,
                    after: units,
                });
            }
            last.push((st.endgame, jobs.len() - 1));
        }
        jobs
    }
}

fn rate(solver: Solver, records: &[Record]) -> Rate {
    let mine: Vec<&Record> = records.iter().filter(|r| r.solver == solver).collect();
    let sum = |rs: &[&Record]| rs.iter().map(|r| r.entries).sum::<u64>();
    let verified: Vec<&Record> = mine
        .iter()
        .copied()
        .filter(|r| r.verification.is_some())
        .collect();
    let refs: Vec<(&Reference, u64)> = REFERENCES
        .iter()
        .filter(|r| r.1 == solver)
        .map(|r| {
            let m = Material::parse(r.0).expect("a reference names an endgame");
            (r, entries(&m.canonical().0))
        })
        .collect();
    let ref_sum = |f: &dyn Fn(&Reference) -> Option<f64>| {
        let (mut x, mut e) = (0.0, 0u64);
        for (r, n) in &refs {
            if let Some(v) = f(r) {
                x += v;
                e += n;
            }
        }
        x / e as f64
    };
    let mut basis = Vec::new();
    let generation = if sum(&mine) >= MEASURED_ENTRIES {
        basis.push(format!(
            "generation measured here ({} tables, {} entries)",
            mine.len(),
            sum(&mine)
        ));
        mine.iter().map(|r| r.generation).sum::<f64>() / sum(&mine) as f64
    } else {
        ref_sum(&|r| Some(r.2))
    };
    let verification = if sum(&verified) >= MEASURED_ENTRIES {
        basis.push(format!(
            "verification measured here ({} tables)",
            verified.len()
        ));
        verified
            .iter()
            .map(|r| r.verification.unwrap_or(0.0))
            .sum::<f64>()
            / sum(&verified) as f64
    } else {
        ref_sum(&|r| r.3)
    };
    let bytes = if sum(&mine) >= MEASURED_ENTRIES {
        basis.push("bytes measured here".to_string());
        mine.iter().map(|r| r.bytes() as f64).sum::<f64>() / sum(&mine) as f64
    } else {
        ref_sum(&|r| r.4.map(|b| b as f64))
    };
    if basis.len() < 3 {
        let names: Vec<String> = refs
            .iter()
            .map(|(r, n)| {
                format!(
                    "{} {} entries: {:.1} s{}{}",
                    r.0,
                    n,
                    r.2,
                    r.3.map_or(String::new(), |v| format!(" + {v:.1} s verified")),
                    r.4.map_or(String::new(), |b| format!(", {b} bytes"))
                )
            })
            .collect();
        let what = if basis.is_empty() {
            "reference"
        } else {
            "the rest from reference"
        };
        basis.push(format!(
            "{what} builds, 2 threads (docs/benchmarks.md): {}",
            names.join("; ")
        ));
    }
    Rate {
        solver,
        generation,
        verification,
        bytes,
        basis: basis.join("; "),
    }
}

/// The records of the plan file at `path` (none if it is absent).
/// Bytes and payload checksum (xxh3, as in the header) of `m`'s DTM, DTZ, DTZ50 and WDL files
/// in `dir`.
pub fn files_of(dir: &Path, m: &Material) -> Result<[(u64, u64); 4], GenError> {
    let mut files = [(0, 0); 4];
    for (f, metric) in files.iter_mut().zip(FILES) {
        let path = dir.join(file_name(m, metric));
        let t = TableFile::open(&path)?;
        let bytes = std::fs::metadata(&path)
            .map_err(|e| GenError::Io(path.clone(), e))?
            .len();
        *f = (bytes, t.header().payload_hash);
    }
    Ok(files)
}

fn read_records(path: &Path) -> Result<Vec<Record>, GenError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(GenError::Io(path.to_path_buf(), e)),
    };
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("step\t") || line.is_empty() {
            continue;
        }
        let r = line.strip_prefix("built\t").and_then(Record::parse);
        match r {
            Some(r) => out.push(r),
            None => {
                return Err(GenError::Io(
                    path.to_path_buf(),
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("line {} is not a plan line: {line:?}", k + 1),
                    ),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_puts_every_sub_endgame_first() {
        let list = order(&[Material::parse("KRPKR").unwrap()]);
        for (k, m) in list.iter().enumerate() {
            for s in m.sub_endgames().into_iter().filter(|s| s.men() > 2) {
                let at = list
                    .iter()
                    .position(|x| *x == s)
                    .expect("sub-endgame in the plan");
                assert!(at < k, "{s} after {m}");
            }
        }
        assert_eq!(list.last().unwrap().to_string(), "KRPKR");
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let r = Record {
            endgame: Material::parse("KRPKR").unwrap(),
            solver: Solver::Structures,
            entries: 123_456_789,
            threads: 2,
            generation: 175.8,
            verification: None,
            files: [(1, 0xdead), (2, 0xbeef), (3, 0), (4, u64::MAX)],
        };
        assert_eq!(Record::parse(&r.line()), Some(r.clone()));
        let v = Record {
            verification: Some(402.6),
            ..r
        };
        assert_eq!(Record::parse(&v.line()), Some(v));
        assert_eq!(Record::parse("KRPKR\tvalues\t1"), None);
    }

    #[test]
    fn the_jobs_of_a_plan_hold_its_estimates_in_an_order_that_keeps_its_reads() {
        let dir = std::env::temp_dir().join(format!("fortress-plan-jobs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = Material::parse("KRPPKR").unwrap();
        let plan = Plan::new(&[m], &GenOptions::new(&dir)).unwrap();
        let rates = plan.rates();
        let jobs = plan.jobs(&rates);
        let left = plan.left(&rates);
        let (g, v) = (left.generation, left.verification);
        let work: f64 = jobs.iter().map(|j| j.seconds).sum();
        assert!(
            (work - (g + v)).abs() < 1e-6 * work,
            "{work} against {g} + {v}"
        );
        let units = plan.steps.last().unwrap().units;
        assert!(jobs.iter().filter(|j| j.seconds > 0.0).count() >= units);
        let one = simulate(&jobs, 1);
        assert!((one.finish - work).abs() < 1e-6 * work);
        let many = simulate(&jobs, 1000);
        assert!((many.finish - many.chain).abs() < 1e-6 * many.chain);
        assert!(many.chain < one.finish);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reference_rates_lie_between_their_builds() {
        let r = rate(Solver::Bitmaps, &[]);
        let per = |name: &str, s: f64| s / entries(&Material::parse(name).unwrap()) as f64;
        let (lo, hi) = (per("KQRKBN", 1_157.7), per("KRBKNN", 3_034.4));
        assert!(lo < r.generation && r.generation < hi, "{r:?}");
    }
}
