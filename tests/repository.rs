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

/// True when `line` counts attempts or speaks of periods of work, as a page of current
/// measurements must not: "again", "a third time" and the like, "session", "attempt".
fn counts_attempts(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    let ordinal = |w: &str| {
        [
            "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
        ]
        .contains(&w)
            || (w.len() > 2
                && w[..w.len() - 2].bytes().all(|b| b.is_ascii_digit())
                && ["st", "nd", "rd", "th"].contains(&&w[w.len() - 2..]))
    };
    let work: String = ['s', 'e', 's', 's', 'i', 'o', 'n'].iter().collect();
    words.iter().any(|w| {
        *w == "again"
            || w.starts_with(work.as_str())
            || w.starts_with("attempt")
            || w.starts_with("re-measur")
    }) || words
        .windows(2)
        .any(|p| ordinal(p[0]) && (p[1] == "time" || p[1] == "times"))
}

#[test]
fn the_measurements_page_counts_no_attempts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = root.join("docs");
    let mut found = Vec::new();
    let mut pages = 0;
    for entry in std::fs::read_dir(&docs).expect("docs/ is there").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            pages += 1;
            let text = std::fs::read_to_string(&path).expect("a page reads");
            for (n, line) in text.lines().enumerate() {
                if counts_attempts(line) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(pages > 0, "no page in {}", docs.display());
    assert!(
        found.is_empty(),
        "docs/ says what Fortress does today, each figure once; history is git's. {} line(s) \
         count attempts:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_attempt_check_sees_what_it_must_and_only_that() {
    for text in [
        "### KQRKBN against Syzygy's generator, again",
        "KQRKBN and `rtbgen` in one run, a third time",
        "measured an eighth time",
        "the 2nd time it ran",
        "Measured in the last Session",
        "a second attempt",
    ] {
        assert!(counts_attempts(text), "not flagged: {text}");
    }
    for text in [
        "### KQRKBN against Syzygy's generator",
        "3 runs, alternated, in one run of the script",
        "time taken: 1.2 s (second run of three)",
        "a gain of 9.5 s against rtbgen",
    ] {
        assert!(!counts_attempts(text), "flagged: {text}");
    }
}

/// The wings of `src/egtb/` (its folders) that each wing's files name (`crate::egtb::<wing>`),
/// outside comments and test modules.
fn egtb_wing_edges(root: &Path) -> Vec<(String, String)> {
    let egtb = root.join("src/egtb");
    let wings: Vec<String> = std::fs::read_dir(&egtb)
        .expect("src/egtb is there")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut edges = Vec::new();
    for wing in &wings {
        let mut pending = vec![egtb.join(wing)];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("a wing reads").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let Some(text) = read_text(&path) else {
                    continue;
                };
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for line in code.lines() {
                    let line = line.split("//").next().unwrap_or("");
                    for (at, _) in line.match_indices("crate::egtb::") {
                        let rest = &line[at + "crate::egtb::".len()..];
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if name != *wing && wings.contains(&name) {
                            edges.push((wing.clone(), name));
                        }
                    }
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

/// A circle in the graph `edges`, as the list of its nodes, if there is one.
fn circle(edges: &[(String, String)]) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &[(String, String)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            return Some(path[at..].to_vec());
        }
        if done.iter().any(|n| n == node) {
            return None;
        }
        path.push(node.to_string());
        for (_, to) in edges.iter().filter(|(from, _)| from == node) {
            if let Some(c) = visit(to, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(node.to_string());
        None
    }
    let mut done = Vec::new();
    edges
        .iter()
        .find_map(|(from, _)| visit(from, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_tables_wings_depend_downhill() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = egtb_wing_edges(root);
    assert!(
        edges
            .iter()
            .any(|(from, to)| from == "generate" && to == "format"),
        "the scan found no use of the file format by the generator: {edges:?}"
    );
    assert_eq!(
        circle(&edges),
        None,
        "an import circle between wings of src/egtb"
    );
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let circular = [
        pair("play", "format"),
        pair("format", "index"),
        pair("index", "play"),
    ];
    assert_eq!(
        circle(&circular).map(|c| c.len()),
        Some(3),
        "the circle check misses a circle"
    );
}

/// Every `.rs` file below `dir`, depth first.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("a source folder reads")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn source_files_stay_one_concept_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 20, "the scan found {} files", files.len());
    let mut long = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a source file reads");
        let lines = text.lines().count();
        // Past 1,500 lines a file says in its module note why it is one concept.
        let explained = text
            .lines()
            .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
            .any(|l| l.contains("one concept"));
        if lines > 2000 || (lines > 1500 && !explained) {
            long.push(format!("{}: {lines} lines", path.display()));
        }
    }
    assert!(long.is_empty(), "files past their length: {long:?}");
}

#[test]
fn the_tables_top_level_holds_what_every_wing_shares() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<String> = std::fs::read_dir(root.join("src/egtb"))
        .expect("src/egtb is there")
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().any(|f| f == "mod.rs"), "{files:?}");
    assert!(
        files.len() <= 3,
        "src/egtb/ holds mod.rs and at most two shared files, not {files:?}"
    );
}
