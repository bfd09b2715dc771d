//! Damaged Syzygy files are refused with the cause named and the engine plays on. The files in
//! `tests/data/syzygy` were written by Syzygy's generator (`rtbgen`, syzygy1/tb); the checksums
//! they carry are those published with it (`checksums/wdl345.txt`: KQvKR.rtbw
//! a559e2154b6f9d4f21597fc3e20c36b2). Each test damages a copy as a disk or a download would:
//! bytes changed past the header, the file cut short, a header byte changed, nothing left.

#[path = "common/uci_driver.rs"]
mod uci_driver;

use fortress::chess::{legal_moves, parse_uci_move, Position};
use std::path::{Path, PathBuf};
use uci_driver::Engine;

/// Queen against rook, White to move: the damaged file is the one that covers it.
const KQKR: &str = "8/8/2k5/8/8/3r4/1K6/Q7 w - - 0 1";

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/syzygy")
}

/// A copy of the shipped files in a fresh directory, `KQvKR.rtbw` passed through `damage`.
fn copy_with(damage: impl Fn(&mut Vec<u8>)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["KQvK.rtbw", "KRvK.rtbw", "KQvKR.rtbw"] {
        let mut bytes = std::fs::read(shipped().join(name)).unwrap();
        if name == "KQvKR.rtbw" {
            damage(&mut bytes);
        }
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

/// The engine on `dir`'s Syzygy files: the `info string` lines that setting the path gave, and
/// the bestmove it plays in KQKR.
fn play_with(dir: &Path) -> (Vec<String>, String) {
    let mut e = Engine::start();
    let tables = tempfile::tempdir().unwrap();
    e.send("setoption name GenerateMissingTables value false");
    e.send(&format!(
        "setoption name NalimovPath value {}",
        tables.path().display()
    ));
    e.send(&format!(
        "setoption name SyzygyPath value {}",
        dir.display()
    ));
    let said: Vec<String> = e
        .ready()
        .into_iter()
        .filter(|l| l.contains("Syzygy"))
        .collect();
    let (best, _) = e.go(&format!("position fen {KQKR}"), "go depth 8");
    e.send("quit");
    assert!(e.close().success(), "the engine exits cleanly");
    (said, best)
}

fn legal(best: &str) -> bool {
    let pos = Position::from_fen(KQKR).unwrap();
    parse_uci_move(&pos, best).is_some_and(|m| legal_moves(&pos).contains(m))
}

#[test]
fn sound_files_are_all_taken() {
    let dir = copy_with(|_| {});
    let (said, best) = play_with(dir.path());
    assert!(
        said.iter()
            .any(|l| l.contains("3 WDL and 0 DTZ tables, up to 4 men")),
        "{said:?}"
    );
    assert!(!said.iter().any(|l| l.contains("left out")), "{said:?}");
    assert!(legal(&best), "{best}");
}

#[test]
fn damaged_files_are_left_out_and_the_engine_plays_on() {
    let changed_past_header = |b: &mut Vec<u8>| {
        let mut rng = fastrand::Rng::with_seed(87);
        for _ in 0..200 {
            let i = rng.usize(64..b.len() - 16);
            b[i] ^= rng.u8(1..);
        }
    };
    type Damage<'a> = &'a dyn Fn(&mut Vec<u8>);
    let cases: [(&str, Damage, &str); 4] = [
        (
            "200 bytes changed",
            &changed_past_header,
            "do not match its checksum",
        ),
        (
            "truncated",
            &|b| b.truncate(b.len() / 2),
            "not a multiple of 64",
        ),
        (
            "a header byte changed",
            &|b| b[5] ^= 0x40,
            "do not match its checksum",
        ),
        ("empty", &|b| b.clear(), "0 bytes"),
    ];
    for (what, damage, cause) in cases {
        let dir = copy_with(damage);
        let (said, best) = play_with(dir.path());
        let line = said
            .iter()
            .find(|l| l.contains("KQvKR.rtbw left out"))
            .unwrap_or_else(|| panic!("{what}: KQvKR.rtbw not refused: {said:?}"));
        assert!(
            line.starts_with("info string") && line.contains(cause),
            "{what}: {line}"
        );
        assert!(
            said.iter()
                .any(|l| l.contains("2 WDL and 0 DTZ tables, up to 3 men")),
            "{what}: the sound files are still used: {said:?}"
        );
        assert!(legal(&best), "{what}: {best}");
    }
}

#[test]
fn a_path_of_damaged_files_alone_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(shipped().join("KRvK.rtbw")).unwrap();
    bytes[100] ^= 1;
    std::fs::write(dir.path().join("KRvK.rtbw"), bytes).unwrap();
    let mut e = Engine::start();
    e.send(&format!(
        "setoption name SyzygyPath value {}",
        dir.path().display()
    ));
    let said = e.ready();
    assert!(
        said.iter()
            .any(|l| l.contains("error: SyzygyPath: no sound Syzygy table")
                && l.contains("KRvK.rtbw left out")),
        "{said:?}"
    );
    let (best, _) = e.go("position fen 8/8/8/3k4/8/8/8/R3K3 w - - 0 1", "go depth 6");
    assert_ne!(best, "0000");
    e.send("quit");
    assert!(e.close().success());
}

/// The shipped files are Syzygy's own: their checksums are the published ones, which the
/// engine's check (`sound_files_are_all_taken`) then finds equal to their contents.
#[test]
fn the_shipped_files_carry_their_published_checksums() {
    let tail = |name: &str| {
        let b = std::fs::read(shipped().join(name)).unwrap();
        b[b.len() - 16..]
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    assert_eq!(tail("KQvKR.rtbw"), "a559e2154b6f9d4f21597fc3e20c36b2");
    assert_eq!(tail("KRvK.rtbw"), "81da63fe25b9ed66f459001558f83ca5");
}
