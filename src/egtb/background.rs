//! Background generation: endgames the search meets without a table (at most `GenerateMaxMen`
//! men) go on a queue (crossbeam channel, no duplicates) for one worker thread, which builds
//! them with the retrograde generator (`egtb::generate`, sub-endgames first: Thompson 1996,
//! Section 6), verifies them, and moves them into the first directory of the table path; the
//! registry (`egtb::probe`) is then rescanned, so the running engine probes the new table at
//! once.
//!
//! No partial table is ever visible: the worker builds in a private staging directory
//! (`<dir>/.fortress-gen-<pid>/`, where the sub-tables it needs are hard-linked or copied) and
//! renames the three verified files into `<dir>` one by one (each rename is atomic; the registry
//! opens an endgame only when all three are present and valid). Quitting mid-generation leaves
//! only the staging directory, which the next worker removes (if its process is gone).
//!
//! The worker yields to the search: its generator runs in a dedicated one-thread rayon pool
//! whose thread is reniced to 19 (`renice` on the thread's id, read from `/proc/thread-self`;
//! no `unsafe`). Messages go through the registry's sink (`Tablebases::say`).

use super::file::{file_name, process_gone, Metric};
use super::generate::{gentb, GenOptions};
use super::material::Material;
use super::probe::Tablebases;
use crossbeam::channel::{unbounded, Sender};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

/// The queue's sending side; dropping it ends the worker after its current job.
pub struct Background {
    tx: Sender<Material>,
    queued: Arc<Mutex<HashSet<Material>>>,
}

impl Background {
    /// Starts the worker for `tb`.
    pub fn start(tb: &Arc<Tablebases>) -> Background {
        let (tx, rx) = unbounded::<Material>();
        let queued: Arc<Mutex<HashSet<Material>>> = Arc::default();
        let weak: Weak<Tablebases> = Arc::downgrade(tb);
        let q = Arc::clone(&queued);
        std::thread::Builder::new()
            .name("tb-generate".into())
            .spawn(move || {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "tb-generate-pool".into())
                    .start_handler(|_| lower_priority())
                    .build();
                let Ok(pool) = pool else { return };
                cleanup_stale_staging(&weak);
                for m in rx.iter() {
                    let Some(tb) = weak.upgrade() else { return };
                    pool.install(|| build(&tb, m));
                    drop(tb);
                    q.lock().expect("queue lock").remove(&m);
                }
            })
            .expect("spawning the table generator thread");
        Background { tx, queued }
    }

    /// Queues `m` (canonical) unless it is queued or being built.
    pub fn request(&self, m: Material) {
        let mut q = self.queued.lock().expect("queue lock");
        if q.insert(m) {
            let _ = self.tx.send(m);
        }
    }
}

/// Renice the calling thread to 19 (lowest priority). Linux: `/proc/thread-self` names the
/// thread's id, and `setpriority(PRIO_PROCESS, tid)` (what `renice -p` calls) acts on that one
/// thread. Best effort: without `renice` the worker simply runs at normal priority.
fn lower_priority() {
    let Ok(link) = std::fs::read_link("/proc/thread-self") else {
        return;
    };
    let Some(tid) = link
        .file_name()
        .and_then(|t| t.to_str())
        .map(str::to_string)
    else {
        return;
    };
    let _ = std::process::Command::new("renice")
        .args(["-n", "19", "-p", &tid])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

fn staging_name(pid: u32) -> String {
    format!(".fortress-gen-{pid}")
}

/// Removes staging directories left by processes that are gone.
fn cleanup_stale_staging(weak: &Weak<Tablebases>) {
    let Some(tb) = weak.upgrade() else { return };
    let Some(dir) = tb.dirs().into_iter().next() else {
        return;
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(".fortress-gen-")
            .and_then(|p| p.parse().ok());
        if let Some(pid) = pid {
            if pid == std::process::id() || process_gone(pid) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Where the three files of `m` are, among `dirs` (the first directory holding all three).
fn find_tables(dirs: &[PathBuf], m: &Material) -> Option<PathBuf> {
    dirs.iter()
        .find(|d| {
            Metric::ALL
                .iter()
                .all(|x| d.join(file_name(m, *x)).is_file())
        })
        .cloned()
}

fn build(tb: &Tablebases, m: Material) {
    if tb.snapshot().has(&m) {
        return;
    }
    let dirs = tb.dirs();
    let Some(dir) = dirs.first().cloned() else {
        tb.say(&format!(
            "cannot generate {m}: NalimovPath names no directory"
        ));
        return;
    };
    let start = Instant::now();
    tb.say(&format!(
        "generating table {m} in the background into {}",
        dir.display()
    ));
    let stage = dir.join(staging_name(std::process::id()));
    let result = (|| -> Result<Vec<Material>, String> {
        std::fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
        // Sub-tables already present anywhere in the path: link (or copy) into the stage.
        let plan = super::generate::plan(&[m]);
        for sub in plan.iter().filter(|s| **s != m) {
            if let Some(src) = find_tables(&dirs, sub) {
                for metric in Metric::ALL {
                    let name = file_name(sub, metric);
                    let to = stage.join(&name);
                    if to.exists() {
                        continue;
                    }
                    if std::fs::hard_link(src.join(&name), &to).is_err() {
                        std::fs::copy(src.join(&name), &to)
                            .map_err(|e| format!("{}: {e}", to.display()))?;
                    }
                }
            }
        }
        let opts = GenOptions {
            dir: stage.clone(),
            force: false,
            progress: false,
            verify: true,
            full_dtz50: false,
        };
        let built = gentb(&[m], &opts, &mut |_| {}).map_err(|e| e.to_string())?;
        let mut moved = Vec::new();
        for s in built.iter().filter(|s| s.built) {
            // DTM last: the registry looks for `*.dtm.ftb` and needs all three.
            for metric in [Metric::Dtz, Metric::Dtz50, Metric::Dtm] {
                let name = file_name(&s.material, metric);
                std::fs::rename(stage.join(&name), dir.join(&name))
                    .map_err(|e| format!("{}: {e}", dir.join(&name).display()))?;
            }
            moved.push(s.material);
        }
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(moved)
    })();
    let _ = std::fs::remove_dir_all(&stage);
    match result {
        Ok(moved) => {
            tb.rescan();
            let names: Vec<String> = moved.iter().map(|m| m.to_string()).collect();
            tb.say(&format!(
                "table {m} ready ({} built and verified in {:.1} s: {})",
                moved.len(),
                start.elapsed().as_secs_f64(),
                names.join(" ")
            ));
        }
        Err(e) => tb.say(&format!("generating table {m} failed: {e}")),
    }
}
