//! Background generation: endgames the search meets without a table (at most `GenerateMaxMen`
//! men) are listed as wanted by the registry (`Tablebases::request`, no duplicates); one worker
//! thread, which the UCI session starts and owns, builds
//! them with the retrograde generator (`egtb::generate`, sub-endgames first: Thompson 1996,
//! Section 6), verifies them, and moves them into the first directory of the table path; the
//! registry (`egtb::play::probe`) is then rescanned, so the running engine probes the new table at
//! once.
//!
//! No partial table is ever visible: each table is built and verified in a staging directory
//! (`egtb::format::staging`) and moved into `<dir>` only then; sub-tables are read from wherever in the
//! path they are. The worker never creates the table directory: a path that names none that
//! exists gets a message and no build.
//!
//! The worker yields to the search: its generator runs in a dedicated one-thread rayon pool
//! whose thread is reniced to 19 (`renice` on the thread's id, read from `/proc/thread-self`;
//! no `unsafe`). Messages go through the registry's sink (`Tablebases::say`).

use crate::egtb::generate::{gentb, GenOptions};
use crate::egtb::material::Material;
use crate::egtb::play::probe::Tablebases;
use crossbeam::channel::{bounded, select, Sender};
use std::sync::{Arc, Weak};
use std::time::Instant;

/// The worker's handle: whoever holds it owns the worker, which ends after its current job
/// when the handle is dropped (or when the tables are).
pub struct Background {
    _stop: Sender<()>,
}

impl Background {
    /// Starts the worker for `tb`: it builds the endgames `tb` lists as wanted, one at a time.
    pub fn start(tb: &Arc<Tablebases>) -> Background {
        let (stop, stopped) = bounded::<()>(0);
        let wanted = tb.wanted();
        let weak: Weak<Tablebases> = Arc::downgrade(tb);
        std::thread::Builder::new()
            .name("tb-generate".into())
            .spawn(move || {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "tb-generate-pool".into())
                    .start_handler(|_| lower_priority())
                    .build();
                let Ok(pool) = pool else { return };
                loop {
                    let m = select! {
                        recv(wanted) -> m => match m { Ok(m) => m, Err(_) => return },
                        recv(stopped) -> _ => return,
                    };
                    let Some(tb) = weak.upgrade() else { return };
                    pool.install(|| build(&tb, m));
                    tb.built(&m);
                }
            })
            .expect("spawning the table generator thread");
        Background { _stop: stop }
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
    // The path holds only existing directories and the engine's default one, which alone may
    // be created (`Tablebases::set_path`).
    let made = dir.is_dir() || (dir == tb.own_dir() && std::fs::create_dir_all(&dir).is_ok());
    if !made {
        tb.say(&format!(
            "cannot generate {m}: {} is not a directory",
            dir.display()
        ));
        return;
    }
    let start = Instant::now();
    tb.say(&format!(
        "generating table {m} in the background into {}",
        dir.display()
    ));
    let opts = GenOptions {
        also: dirs[1..].to_vec(),
        ..GenOptions::new(&dir)
    };
    match gentb(&[m], &opts, &mut |s| {
        if s.built {
            tb.rescan();
        }
    }) {
        Ok(done) => {
            let names: Vec<String> = done
                .iter()
                .filter(|s| s.built)
                .map(|s| s.material.to_string())
                .collect();
            tb.say(&format!(
                "table {m} ready ({} built and verified in {:.1} s: {})",
                names.len(),
                start.elapsed().as_secs_f64(),
                names.join(" ")
            ));
        }
        Err(e) => tb.say(&format!("generating table {m} failed: {e}")),
    }
}
