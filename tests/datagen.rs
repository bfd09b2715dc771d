//! `engine datagen`: the file depends on the seed alone, a stopped run resumes to the same
//! file, a resume with other arguments is refused, and a game in the tables takes their verdict.

use fortress::chess::Position;
use fortress::egtb::generate::{gentb, GenOptions};
use fortress::egtb::{Material, Tablebases};
use fortress::eval::network::Network;
use fortress::tune::datagen::{progress_path, read_records, run, DatagenArgs, DatagenError};
use fortress::tune::record::GameResult;
use std::io::Write;
use std::path::Path;
use std::process::Command;

fn args(out: &Path, games: u64, seed: u64, threads: usize) -> DatagenArgs {
    DatagenArgs {
        out: out.to_path_buf(),
        games,
        nodes: 300,
        random_plies: 4,
        seed,
        threads,
        network: Network::built_in(),
    }
}

#[test]
fn the_file_depends_on_the_seed_not_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (one, three, other) = (
        dir.path().join("one.bin"),
        dir.path().join("three.bin"),
        dir.path().join("other.bin"),
    );
    let mut seen = Vec::new();
    let (done, played) = run(&[], None, &args(&one, 8, 7, 1), &mut |p| seen.push(p.games)).unwrap();
    assert_eq!((done.games, played), (8, 8));
    assert_eq!(
        seen,
        (1..=8).collect::<Vec<_>>(),
        "games are written in order"
    );
    run(&[], None, &args(&three, 8, 7, 3), &mut |_| {}).unwrap();
    run(&[], None, &args(&other, 8, 8, 2), &mut |_| {}).unwrap();
    let bytes = std::fs::read(&one).unwrap();
    assert_eq!(bytes, std::fs::read(&three).unwrap());
    assert_ne!(bytes, std::fs::read(&other).unwrap());

    let records = read_records(&one).unwrap();
    assert_eq!(records.len() as u64, done.positions);
    assert!(done.positions > 8 * 10, "{} positions", done.positions);
    assert_eq!(done.results.iter().sum::<u64>(), 8);
    for r in &records {
        let pos = r.position().unwrap();
        assert!(!pos.in_check(), "{}", r.to_fen());
        assert!(!r.from_tables);
    }
}

#[test]
fn a_stopped_run_resumes_to_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, stopped) = (dir.path().join("whole.bin"), dir.path().join("stopped.bin"));
    let (all, _) = run(&[], None, &args(&whole, 6, 3, 2), &mut |_| {}).unwrap();
    let (part, _) = run(&[], None, &args(&stopped, 2, 3, 2), &mut |_| {}).unwrap();
    assert_eq!(part.games, 2);
    // A run killed after its checkpoint leaves bytes (part of a record) the progress file does
    // not count.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&stopped)
        .unwrap();
    f.write_all(&[0xAB; 45]).unwrap();
    drop(f);
    let (resumed, played) = run(&[], None, &args(&stopped, 6, 3, 1), &mut |_| {}).unwrap();
    assert_eq!(played, 4);
    assert_eq!(resumed, all);
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&stopped).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(progress_path(&whole)).unwrap(),
        std::fs::read_to_string(progress_path(&stopped)).unwrap()
    );
    // Finished: a second run plays nothing.
    let (again, played) = run(&[], None, &args(&stopped, 6, 3, 2), &mut |_| {}).unwrap();
    assert_eq!((again, played), (all, 0));
}

#[test]
fn resuming_with_other_arguments_or_a_foreign_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.bin");
    run(&[], None, &args(&out, 1, 5, 1), &mut |_| {}).unwrap();
    let before = std::fs::read(&out).unwrap();
    match run(&[], None, &args(&out, 2, 6, 1), &mut |_| {}) {
        Err(e @ DatagenError::Mismatch { field: "seed", .. }) => {
            assert!(e.to_string().contains("seed 5, not 6"), "{e}")
        }
        other => panic!("{:?}", other.map(|x| x.1)),
    }
    let book = [Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap()];
    assert!(matches!(
        run(&book, None, &args(&out, 2, 5, 1), &mut |_| {}),
        Err(DatagenError::Mismatch {
            field: "openings",
            ..
        })
    ));
    assert_eq!(std::fs::read(&out).unwrap(), before, "left as it was");

    let foreign = dir.path().join("foreign.bin");
    std::fs::write(&foreign, b"not ours").unwrap();
    assert!(matches!(
        run(&[], None, &args(&foreign, 1, 5, 1), &mut |_| {}),
        Err(DatagenError::NotResumable(_))
    ));
    // A file shorter than its progress file says: damaged, not resumed.
    std::fs::write(&out, &before[..before.len() - 32]).unwrap();
    let e = run(&[], None, &args(&out, 2, 5, 1), &mut |_| {}).unwrap_err();
    assert!(matches!(e, DatagenError::Progress(..)), "{e}");
}

#[test]
fn a_game_in_the_tables_takes_their_verdict() {
    let dir = tempfile::tempdir().unwrap();
    gentb(
        &[Material::parse("KRK").unwrap()],
        &GenOptions::new(dir.path()),
        &mut |_| {},
    )
    .unwrap();
    let tables = Tablebases::new();
    tables.set_path(vec![dir.path().to_path_buf()]);
    for (fen, result) in [
        // Black to move, lost: White wins.
        ("8/8/8/4k3/8/8/8/R3K3 b - - 0 1", GameResult::Win),
        // White to move against the rook: White loses.
        ("8/8/8/4K3/8/8/8/r3k3 w - - 0 1", GameResult::Loss),
        // Black takes the rook: a draw.
        ("8/8/8/8/8/8/1k6/R5K1 b - - 0 1", GameResult::Draw),
        // Won, but not within the 50-move rule's plies left: a draw.
        ("8/8/8/4k3/8/8/8/R3K3 b - - 98 80", GameResult::Draw),
    ] {
        let out = dir.path().join("game.bin");
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(progress_path(&out));
        let book = [Position::from_fen(fen).unwrap()];
        let mut a = args(&out, 1, 1, 1);
        a.random_plies = 0;
        let (done, _) = run(&book, Some(tables.clone()), &a, &mut |_| {}).unwrap();
        let mut results = [0; 3];
        results[result as usize] = 1;
        assert_eq!(done.results, results, "{fen}");
        assert_eq!((done.table_games, done.positions), (1, 0), "{fen}");
    }
}

#[test]
fn the_command_line_refuses_what_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bin");
    let engine = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["datagen", "--games", "1", "--nodes", "100", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let missing = dir.path().join("missing");
    let o = engine(&["--tables", missing.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a directory"));
    let o = engine(&["--threads", "0"]);
    assert!(!o.status.success());
    let o = engine(&["--openings", missing.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(!out.exists(), "nothing written");
    let o = engine(&["--threads", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains(": 1 games"));
    read_records(&out).unwrap();
}
