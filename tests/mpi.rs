//! `engine gentb --mpi` under `mpirun -np 3 --oversubscribe` on this machine (rank 0 and two
//! workers sharing one table directory): its files equal a one-machine build's byte for byte,
//! also when a worker is killed in the middle of an endgame and its endgame is handed out again.
//! Needs Open MPI's `mpirun` (Debian: openmpi-bin; `.ci/run` installs it).

#![cfg(feature = "mpi")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The set: three pawnless four-man endgames and their three-man sub-endgames, six tables.
const SET: [&str; 3] = ["KQKR", "KRKN", "KQKN"];

/// The header's creation time, fixed (as for any reproducible build) so that two builds of a
/// table can be the same bytes.
const EPOCH: &str = "1000000000";

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fortress_mpi_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every table file of `dir` by name, with its bytes.
fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ftb"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    out.sort();
    out
}

fn mpirun(dir: &Path) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--enable-recovery", "--oversubscribe", "-np", "3"])
        .args(["-x", "SOURCE_DATE_EPOCH"])
        .arg(env!("CARGO_BIN_EXE_engine"))
        .arg("gentb")
        .args(SET)
        .args(["--mpi", "--silence", "3", "--threads", "1", "--dir"])
        .arg(dir)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        // CI runs as root, which Open MPI refuses unless told twice.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped());
    c
}

/// Runs an MPI build into `dir`, killing with SIGKILL the worker that `victim` names (the
/// first line announcing that endgame's build gives the worker's pid). Returns rank 0's lines.
fn run(dir: &Path, victim: Option<&str>) -> Vec<String> {
    let mut child = mpirun(dir)
        .spawn()
        .expect("mpirun runs (Debian: apt-get install openmpi-bin libopenmpi-dev)");
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // "[k/n] rank R (PID HOST) builds KQKR"
        if let Some(v) = victim.filter(|v| line.ends_with(&format!(" builds {v}"))) {
            if !lines.iter().any(|l: &String| l.starts_with("killed")) {
                let pid = line.split('(').nth(1).unwrap().split(' ').next().unwrap();
                let ok = Command::new("kill").args(["-9", pid]).status().unwrap();
                assert!(ok.success(), "kill -9 {pid}");
                lines.push(format!("killed {pid} building {v}"));
            }
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "mpirun: {status}\n{}", lines.join("\n"));
    lines
}

#[test]
fn an_mpi_build_equals_a_one_machine_build_also_when_a_worker_is_killed() {
    let one = temp_dir("one");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("gentb")
        .args(SET)
        .args(["--no-verify", "--dir"])
        .arg(&one)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let reference = tables(&one);
    assert_eq!(reference.len(), 6 * 4, "six endgames of four files");

    let whole = temp_dir("whole");
    let lines = run(&whole, None);
    let text = lines.join("\n");
    assert!(text.contains("6 tables built, 0 kept"), "{text}");
    assert!(
        text.contains("rank 1 (") && text.contains("rank 2 ("),
        "{text}"
    );
    assert!(text.contains("0 disagree"), "the workers verify: {text}");
    assert!(
        tables(&whole) == reference,
        "files differ from a one-machine build\n{text}"
    );

    let killed = temp_dir("killed");
    let lines = run(&killed, Some("KQKR"));
    let text = lines.join("\n");
    assert!(text.contains("killed "), "{text}");
    assert!(
        text.contains("taken for dead: its KQKR is handed out again"),
        "{text}"
    );
    assert!(text.contains("6 tables built, 0 kept"), "{text}");
    assert!(
        tables(&killed) == reference,
        "files differ from a one-machine build after a worker was killed\n{text}"
    );
    // The killed worker's half-built table went with its staging directory.
    let left: Vec<String> = std::fs::read_dir(&killed)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // The plan's record holds each table's checksums, as the workers reported them.
    let plan = std::fs::read_to_string(killed.join("gentb.plan")).unwrap();
    assert_eq!(plan.lines().filter(|l| l.starts_with("built\t")).count(), 6);

    for d in [one, whole, killed] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// Started without `mpirun` (a job of one process), `--mpi` says what it needs.
#[test]
fn mpi_alone_asks_for_mpirun() {
    let dir = temp_dir("alone");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gentb", "KQK", "--mpi", "--dir"])
        .arg(&dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("at least two processes"), "{err}");
    assert!(!dir.join("KQK.dtm.ftb").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
