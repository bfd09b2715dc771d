//! The repository speaks of the project only: no tracked text file may name a path of one
//! particular machine (a user's or the build machine's home or work directory) or number the
//! periods of work that produced it. Measurements live in `docs/` with the commands that
//! reproduce them; history lives in git.
//!
//! The files are those `git ls-files` lists in the crate root; without git (or outside a git
//! checkout) the crate's directory tree, less `target/` and `.git/`. The patterns are assembled
//! at run time, so this file is scanned like any other without matching itself.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Files larger than this are not source or documentation (table files, data); never read.
const MAX_TEXT_BYTES: u64 = 4 << 20;

/// Absolute paths that belong to one machine.
fn machine_paths() -> Vec<String> {
    ["work", "root", "home"]
        .iter()
        .map(|dir| format!("/{dir}/"))
        .collect()
}

/// One finding: where, and the line as written.
#[derive(Debug)]
struct Finding {
    file: String,
    line: usize,
    what: &'static str,
    text: String,
}

/// True when `line` numbers a period of work: the word for one (singular or plural, any case)
/// followed by a space or a hyphen and a digit.
fn numbers_a_work_period(line: &str) -> bool {
    let word: String = ['s', 'e', 's', 's', 'i', 'o', 'n'].iter().collect();
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut from = 0;
    while let Some(at) = lower[from..].find(&word) {
        let mut i = from + at + word.len();
        if bytes.get(i) == Some(&b's') {
            i += 1;
        }
        if matches!(bytes.get(i), Some(b' ') | Some(b'-'))
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            return true;
        }
        from = from + at + word.len();
    }
    false
}

/// Every line of `text` that names a machine path or a numbered work period.
fn check_text(file: &str, text: &str) -> Vec<Finding> {
    let paths = machine_paths();
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let what = if paths.iter().any(|p| line.contains(p.as_str())) {
            Some("machine path")
        } else if numbers_a_work_period(line) {
            Some("numbered work period")
        } else {
            None
        };
        if let Some(what) = what {
            found.push(Finding {
                file: file.to_string(),
                line: n + 1,
                what,
                text: line.trim().chars().take(160).collect(),
            });
        }
    }
    found
}

/// Tracked files, relative to `root`, or `None` when git cannot say.
fn git_files(root: &Path) -> Option<Vec<PathBuf>> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let list = String::from_utf8(out.stdout).ok()?;
    let files: Vec<PathBuf> = list
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    if files.is_empty() {
        None
    } else {
        Some(files)
    }
}

/// Every file under `root`, relative to it, less `target/` and `.git/`; links are not followed.
fn walked_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = rel.join(&name);
            if kind.is_dir() {
                if name != "target" && name != ".git" {
                    pending.push(path);
                }
            } else if kind.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The file's text, or `None` for a missing, large, binary (a NUL byte) or non-UTF-8 file.
fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_TEXT_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[test]
fn no_machine_paths_or_work_periods_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = git_files(root).unwrap_or_else(|| walked_files(root));
    assert!(
        files.iter().any(|f| f == Path::new("Cargo.toml")),
        "the file list of {} does not hold Cargo.toml",
        root.display()
    );
    let mut found = Vec::new();
    for file in &files {
        if let Some(text) = read_text(&root.join(file)) {
            found.extend(check_text(&file.to_string_lossy(), &text));
        }
    }
    let report: Vec<String> = found
        .iter()
        .map(|f| format!("{}:{}: {}: {}", f.file, f.line, f.what, f.text))
        .collect();
    assert!(
        found.is_empty(),
        "the repository must speak of the project only (measurements in docs/ with their \
         commands, history in git); {} line(s) to rewrite:\n{}",
        found.len(),
        report.join("\n")
    );
}

#[test]
fn the_check_sees_what_it_must_and_only_that() {
    let work = format!("/{}/", "work");
    let home = format!("/{}/", "home");
    let period = |word: &str, sep: &str, n: u32| format!("measured in {word}{sep}{n} at load 2");

    let must_fail = [
        format!("copied to `{work}tools/bin/fortress-final`"),
        format!("cd {home}someone/fortress"),
        format!("scp engine host:/{}/engine", "root"),
        period("session", " ", 8),
        period("Session", " ", 11),
        period("sessions", " ", 11),
        period("SESSION", "-", 6),
    ];
    for text in &must_fail {
        assert_eq!(check_text("t", text).len(), 1, "not flagged: {text}");
    }

    let must_pass = [
        "the UCI session loop (src/uci/session.rs)",
        "Session::new(out)",
        "a session of 8 games",
        "files in ~/.local/share/fortress/tables",
        "cargo run --release -- gentb --men 4 --dir DIR",
        "/tmp/x and C:\\work\\x are not flagged",
        "homework/ and networks/",
    ];
    for text in &must_pass {
        assert!(check_text("t", text).is_empty(), "flagged: {text}");
    }
}
