//! The command line of the table benchmarks: `cargo bench --bench NAME -- DIR [ENDGAME ...]`.

use std::path::PathBuf;

/// The table directory and the endgames named after it (cargo's own `--bench` flag dropped);
/// without DIR prints the usage and exits with success, so that a plain `cargo bench` skips it.
pub fn dir_and_endgames(bench: &str) -> (PathBuf, Vec<String>) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("skipped, no table directory: cargo bench --bench {bench} -- DIR [ENDGAME ...]");
        std::process::exit(0);
    };
    (dir, args[1..].to_vec())
}
