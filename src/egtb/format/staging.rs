//! Where a table is built before it counts: every table is written and verified in a private
//! staging directory beside the table directory and moved in only once verified, so a kill at
//! any moment leaves nothing in the table directory that looks complete. `gentb` and the
//! background generator both build through this; what killed builders left behind (staging
//! directories, temporary files of `format::write_table`) is removed by the next one.

use crate::egtb::format::{file_name, Metric};
use crate::egtb::material::Material;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A staging directory `<tables>/.staging.<pid>.<n>.<host>`: builders sharing a table
/// directory, in threads, processes or (on a shared filesystem) machines, never meet. Dropped,
/// it is removed with whatever it still holds.
pub struct Staging {
    dir: PathBuf,
}

impl Staging {
    /// Creates a staging directory in `tables`, which must exist, after removing what killed
    /// builders left there.
    pub fn new(tables: &Path) -> std::io::Result<Staging> {
        remove_leftovers(tables);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Relaxed);
        let dir = tables.join(format!(".staging.{}.{n}.{}", std::process::id(), host()));
        std::fs::create_dir(&dir)?;
        Ok(Staging { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves the files of `m` into `tables`, the WDL file too where one was written, DTM last
    /// (a reader takes a table as present only when the three distance files are there), and
    /// makes the renames durable.
    pub fn publish(&self, tables: &Path, m: &Material) -> Result<(), (PathBuf, std::io::Error)> {
        let wdl = file_name(m, Metric::Wdl);
        if self.dir.join(&wdl).is_file() {
            let to = tables.join(&wdl);
            std::fs::rename(self.dir.join(&wdl), &to).map_err(|e| (to, e))?;
        }
        for metric in [Metric::Dtz, Metric::Dtz50, Metric::Dtm] {
            let name = file_name(m, metric);
            let to = tables.join(&name);
            std::fs::rename(self.dir.join(&name), &to).map_err(|e| (to, e))?;
        }
        std::fs::File::open(tables)
            .and_then(|d| d.sync_all())
            .map_err(|e| (tables.to_path_buf(), e))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes from `dir` the staging directories (`.staging.<pid>.<n>.<host>`, or without the host
/// as older builds named them) and temporary table files (`.<file>.<pid>.tmp`) of processes that
/// no longer run. Only this machine's: a process id says nothing about another host's
/// processes.
pub fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(rest) = name.strip_prefix(".staging.") {
            let mut parts = rest.splitn(3, '.');
            let (pid, _, owner) = (parts.next(), parts.next(), parts.next());
            let here = owner.is_none_or(|h| h == host());
            if here && pid.and_then(|p| p.parse().ok()).is_some_and(process_gone) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        } else if let Some(pid) = name
            .strip_suffix(".tmp")
            .and_then(|r| r.rsplit('.').next())
            .filter(|_| name.starts_with('.'))
        {
            if pid.parse().is_ok_and(process_gone) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// True if no process `pid` runs (so what it left is stale). False where that cannot be told
/// (no `/proc`): then nothing is removed, the leftovers are only disk space.
fn process_gone(pid: u32) -> bool {
    let proc = Path::new("/proc");
    pid != std::process::id() && proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

/// This machine's name (Linux; elsewhere empty), which tells its staging directories from those
/// of other machines building into the same shared directory.
pub fn host() -> &'static str {
    static HOST: once_cell::sync::Lazy<String> = once_cell::sync::Lazy::new(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().replace(['/', '.'], "_"))
            .unwrap_or_default()
    });
    &HOST
}
