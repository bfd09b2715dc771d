//! A plan run on this machine's cores: one build at a time with every thread, or with `jobs`
//! several at once, each with its share of the threads, as their sub-endgames are done, and only
//! while the memory they need at most (`build_needs`) fits in what the machine can give. On two
//! cores the solvers scale so well that running two builds of one thread each gains nothing
//! (docs/whole-sets.md), so one at a time is the default; on many cores the short builds of
//! small endgames, whose sub-tables, passes and files have fixed costs, are where `jobs` can pay.

use super::{Dispatch, Plan};
use crate::egtb::generate::{build_endgame, GenError, GenOptions, TableSummary};
use crate::egtb::material::Material;
use indicatif::ProgressBar;
use std::sync::mpsc;

/// What happens in the run, for its display.
pub enum Event<'a> {
    /// Step `k` (endgame `m`) starts with this many threads.
    Start(usize, Material, usize),
    Built(&'a TableSummary),
}

/// Builds the steps of `plan` marked in `missing` with `threads` threads, `jobs` builds at once
/// (at least one), each table's passes shown on a bar from `bar`; records
/// each build in the plan. Returns the summaries in the order the builds ended. The first build
/// that fails stops the run once the builds running are over.
pub fn run(
    plan: &mut Plan,
    missing: &[bool],
    opts: &GenOptions,
    threads: usize,
    jobs: usize,
    bar: &dyn Fn() -> ProgressBar,
    on: &mut dyn FnMut(Event),
) -> Result<Vec<TableSummary>, GenError> {
    let threads = threads.max(1);
    let mut work = Dispatch::new(plan, missing);
    let budget = crate::memory::usable_bytes();
    let (tx, rx) = mpsc::channel::<(usize, usize, ProgressBar, Result<TableSummary, GenError>)>();
    let mut done = Vec::new();
    let mut failed = None;
    std::thread::scope(|scope| {
        let (mut busy, mut held) = (0usize, 0u64);
        loop {
            while failed.is_none() {
                let Some(k) = work.next() else { break };
                let st = &plan.steps[k];
                let t = (threads / jobs.max(1)).max(1);
                let fits = budget.is_none_or(|b| held + st.memory <= b);
                if busy > 0 && (busy + t > threads || !fits) {
                    break;
                }
                work.start(k);
                busy += t;
                held += st.memory;
                on(Event::Start(k, st.endgame, t));
                let m = st.endgame;
                let job_opts = GenOptions {
                    progress: bar(),
                    ..opts.clone()
                };
                let tx = tx.clone();
                scope.spawn(move || {
                    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(t)
                            .build()
                            .map_err(|e| GenError::Usage(format!("thread pool: {e}")))?;
                        pool.install(|| build_endgame(&m, &job_opts))
                    }))
                    .unwrap_or_else(|_| Err(GenError::Usage(format!("the build of {m} panicked"))));
                    let _ = tx.send((k, t, job_opts.progress, built));
                });
            }
            if work.running() == 0 {
                break;
            }
            let (k, t, shown, built) = rx.recv().expect("a running build reports");
            shown.finish_and_clear();
            busy -= t;
            held -= plan.steps[k].memory;
            match built.and_then(|s| plan.built(k, &s, t).map(|()| s)) {
                Ok(s) => {
                    work.finish(k);
                    on(Event::Built(&s));
                    done.push(s);
                }
                Err(e) => {
                    work.requeue(k);
                    failed.get_or_insert(e);
                }
            }
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(done),
    }
}
