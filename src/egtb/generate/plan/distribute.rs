//! A plan run across the processes of an MPI job (`mpirun ... engine gentb --mpi`), one a
//! machine, the tables in a directory they all share. Rank 0 holds the plan: it hands each idle
//! worker an endgame whose sub-endgames are all present and records what comes back. A worker
//! builds (and verifies) its endgame exactly as a one-machine run does, with the same solver, so
//! the files are the same byte for byte; it writes them through a staging directory of its own
//! and reports their sizes and checksums, which rank 0 checks against what it reads in the
//! shared directory.
//!
//! While it builds, a worker says so every second. One silent for longer than the run's limit
//! is taken for dead and its endgame handed to the next idle worker; what it left half-built is
//! in its staging directory, never among the tables. Open MPI ends the whole job when a process
//! dies unless `mpirun` is given `--enable-recovery`, and even then it reports no failure to
//! the others: hence the heartbeats. Rank 0 never sends to a worker it has given up for dead
//! (that may be an error that ends the job); one that speaks again is taken back.

use super::{entries, Dispatch, Plan, Record, Solver};
use crate::egtb::generate::{build_endgame, GenError, GenOptions};
use crate::egtb::material::Material;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use mpi::Tag;
use std::time::{Duration, Instant};

/// Worker to rank 0: idle (first with "pid host"); building; built; failed.
const READY: Tag = 1;
const ALIVE: Tag = 2;
const DONE: Tag = 3;
const FAILED: Tag = 4;
/// Rank 0 to a worker: build this endgame; stop.
const BUILD: Tag = 10;
const STOP: Tag = 11;

const HEARTBEAT: Duration = Duration::from_secs(1);

/// The run's MPI environment; finalised when dropped.
pub struct Mpi {
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
}

impl Mpi {
    /// Joins the MPI job this process was started in (by `mpirun`), which needs at least two
    /// processes: rank 0 and a worker.
    pub fn init() -> Result<Mpi, GenError> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| GenError::Usage("MPI was initialised twice".into()))?;
        let world = universe.world();
        if world.size() < 2 {
            return Err(GenError::Usage(
                "--mpi needs at least two processes (rank 0 hands out the work): start it with \
                 mpirun -np N, N >= 2"
                    .into(),
            ));
        }
        Ok(Mpi {
            _universe: universe,
            world,
        })
    }

    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    /// A worker's life: builds what rank 0 hands it with `pool`'s threads until told to stop.
    /// A build that fails is reported to rank 0, which stops the run.
    pub fn work(&self, opts: &GenOptions, pool: rayon::ThreadPool) -> Result<(), GenError> {
        let root = self.world.process_at_rank(0);
        let hello = format!(
            "{} {}",
            std::process::id(),
            crate::egtb::format::staging::host()
        );
        root.send_with_tag(hello.as_bytes(), READY);
        let pool = std::sync::Arc::new(pool);
        loop {
            let (msg, status) = root.receive_vec::<u8>();
            if status.tag() != BUILD {
                return Ok(());
            }
            let m = Material::parse(&String::from_utf8_lossy(&msg))?
                .canonical()
                .0;
            let (o, p) = (opts.clone(), pool.clone());
            let job = std::thread::spawn(move || p.install(|| build_endgame(&m, &o)));
            let mut beat = Instant::now();
            while !job.is_finished() {
                if beat.elapsed() >= HEARTBEAT {
                    root.send_with_tag(&b"."[..], ALIVE);
                    beat = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let threads = pool.current_num_threads();
            let built = job
                .join()
                .unwrap_or_else(|_| Err(GenError::Usage("the build panicked".into())))
                .and_then(|s| Ok((super::files_of(&opts.dir, &m)?, s)));
            match built {
                Ok((files, s)) => {
                    let record = Record {
                        endgame: m,
                        solver: Solver::of(&m, opts),
                        entries: entries(&m),
                        threads,
                        generation: s.seconds,
                        verification: s.verify.as_ref().map(|_| s.verify_seconds),
                        files,
                    };
                    root.send_with_tag(report(&record, &s.line()).as_bytes(), DONE);
                }
                Err(e) => root.send_with_tag(format!("{m}\t{e}").as_bytes(), FAILED),
            }
        }
    }

    /// Rank 0's part: hands out the steps of `plan` marked in `missing` as their sub-endgames
    /// become present, records each build in the plan, and says what happens through `say`.
    /// Returns how many endgames were built. A worker silent for `silence` while it builds (or
    /// before it first reports) is taken for dead and its endgame handed out again.
    pub fn coordinate(
        &self,
        plan: &mut Plan,
        missing: &[bool],
        silence: Duration,
        say: &mut dyn FnMut(&str),
    ) -> Result<usize, GenError> {
        let n = self.world.size() as usize;
        let mut workers: Vec<Worker> = (0..n)
            .map(|_| Worker {
                id: None,
                alive: true,
                building: None,
                heard: Instant::now(),
            })
            .collect();
        workers[0].alive = false;
        let mut work = Dispatch::new(plan, missing);
        let total = missing.iter().filter(|&&b| b).count();
        let mut built = 0;
        let result = loop {
            if work.all_done() {
                break Ok(built);
            }
            for (r, w) in workers.iter_mut().enumerate() {
                if !w.alive || w.id.is_none() || w.building.is_some() {
                    continue;
                }
                let Some(k) = work.next() else {
                    break;
                };
                let m = plan.steps[k].endgame;
                self.world
                    .process_at_rank(r as i32)
                    .send_with_tag(m.to_string().as_bytes(), BUILD);
                work.start(k);
                w.building = Some(k);
                w.heard = Instant::now();
                let id = w.id.as_deref().unwrap_or("");
                say(&format!(
                    "[{}/{total}] rank {r} ({id}) builds {m}",
                    built + work.running()
                ));
            }
            if workers.iter().all(|w| !w.alive) {
                let left = work.left();
                break Err(GenError::Usage(format!(
                    "every worker has stopped answering, {left} endgames left (a new run goes on \
                     from the tables present)"
                )));
            }
            let Some(status) = self.world.any_process().immediate_probe() else {
                for (r, w) in workers.iter_mut().enumerate() {
                    let waiting = w.building.is_some() || w.id.is_none();
                    if w.alive && waiting && w.heard.elapsed() > silence {
                        w.alive = false;
                        let what = match w.building.take() {
                            Some(k) => {
                                work.requeue(k);
                                format!("its {} is handed out again", plan.steps[k].endgame)
                            }
                            None => "it is left out".to_string(),
                        };
                        say(&format!(
                            "rank {r} silent for {:.0} s, taken for dead: {what}",
                            silence.as_secs_f64()
                        ));
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            let r = status.source_rank() as usize;
            let (msg, status) = self
                .world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u8>(status.tag());
            let text = String::from_utf8_lossy(&msg).into_owned();
            let w = &mut workers[r];
            w.heard = Instant::now();
            if !w.alive {
                w.alive = true;
                say(&format!("rank {r} answers again"));
            }
            match status.tag() {
                READY => w.id = Some(text),
                DONE => {
                    w.building = None;
                    let Some((record, line)) = parse_report(&text) else {
                        break Err(GenError::Usage(format!(
                            "rank {r} sent a report that does not parse: {text:?}"
                        )));
                    };
                    let m = record.endgame;
                    let Some(k) = plan.steps.iter().position(|s| s.endgame == m) else {
                        break Err(GenError::Usage(format!(
                            "rank {r} built {m}, which is not in the plan"
                        )));
                    };
                    if work.is_done(k) {
                        continue;
                    }
                    match super::files_of(&plan.dir, &m) {
                        Ok(seen) if seen == record.files => {}
                        Ok(_) => {
                            break Err(GenError::Usage(format!(
                                "rank {r} built {m} but the files rank 0 reads in {} differ \
                                 from those it reports: is the table directory shared?",
                                plan.dir.display()
                            )))
                        }
                        Err(e) => break Err(e),
                    }
                    if let Err(e) = plan.record(k, record) {
                        break Err(e);
                    }
                    work.finish(k);
                    built += 1;
                    say(line);
                }
                FAILED => {
                    let (endgame, what) = text.split_once('\t').unwrap_or(("?", &text));
                    break Err(GenError::Usage(format!(
                        "rank {r} could not build {endgame}: {what}"
                    )));
                }
                _ => {}
            }
        };
        for (r, _) in workers.iter().enumerate().filter(|(_, w)| w.alive) {
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&b"."[..], STOP);
        }
        result
    }
}

struct Worker {
    /// "pid host", once it has reported.
    id: Option<String>,
    alive: bool,
    building: Option<usize>,
    heard: Instant,
}

/// What a worker reports of a build: its record for the plan, and the build's summary line
/// (`TableSummary::line`), on one line of text.
fn report(record: &Record, line: &str) -> String {
    format!("{}\t{line}", record.line())
}

fn parse_report(text: &str) -> Option<(Record, &str)> {
    let (end, _) = text.match_indices('\t').nth(Record::FIELDS - 1)?;
    Some((Record::parse(&text[..end])?, &text[end + 1..]))
}
