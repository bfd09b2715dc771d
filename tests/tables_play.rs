//! Endgame tables in play (issue #6): play-outs of SZ°Z50Z against a perfect defender from
//! hundreds of random won positions of 3- and 4-man endgames (with half-move clocks 0, 20, 60,
//! 90), the same with a DTM-minimising winner for comparison; `probe` against the generator's
//! statistics and verification, colour flip and board symmetry; damaged, missing and deleted
//! tables. The tables are generated once per test binary into a temporary directory.

#[path = "common/both_sides.rs"]
mod both_sides;
use both_sides::store_both_sides;
#[path = "common/playout.rs"]
mod playout;

use fortress::chess::Position;
use fortress::egtb::generate::{gentb, GenOptions, TableSummary};
use fortress::egtb::play::probe::{Tablebases, Wdl};
use fortress::egtb::play::tables::one_ply::{zeroing_within, Endgames};
use fortress::egtb::{EndgameIndex, Half, Material};
use playout::{fen_of, play, won_positions, End, Winner};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const ENDGAMES: [&str; 4] = ["KQK", "KRK", "KPK", "KRKN"];

struct Setup {
    _dir: tempfile::TempDir,
    path: PathBuf,
    summaries: Vec<TableSummary>,
}

fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().to_path_buf();
        let targets: Vec<Material> = ENDGAMES
            .iter()
            .map(|n| Material::parse(n).unwrap())
            .collect();
        let opts = GenOptions::new(&path);
        let summaries = gentb(&targets, &opts, &mut |_| {}).expect("tables build and verify");
        Setup {
            _dir: dir,
            path,
            summaries,
        }
    })
}

fn registry(dir: &Path) -> (Arc<Tablebases>, Arc<Mutex<Vec<String>>>) {
    let tb = Tablebases::new();
    let msgs: Arc<Mutex<Vec<String>>> = Arc::default();
    let m2 = Arc::clone(&msgs);
    tb.set_sink(Some(Arc::new(move |s: &str| {
        m2.lock().unwrap().push(s.to_string())
    })));
    tb.set_path(vec![dir.to_path_buf()]);
    (tb, msgs)
}

#[test]
fn playouts_sz0z50z_win_every_game_and_dtm_does_not() {
    let s = setup();
    let (tb, _) = registry(&s.path);
    let reg = tb.snapshot();
    let mut games = 0;
    let mut dtm_fails = Vec::new();
    for (e, name) in ENDGAMES.iter().enumerate() {
        for (k, h) in [0u16, 20, 60, 90].into_iter().enumerate() {
            let n = if *name == "KRKN" { 40 } else { 25 };
            let positions = won_positions(&reg, name, h, n, 0x9E37 + (e * 16 + k) as u64);
            assert!(
                positions.len() >= n / 2,
                "{name} h={h}: only {} won positions found",
                positions.len()
            );
            for pos in &positions {
                games += 1;
                let (end, _) = play(&reg, pos, Winner::Sz50);
                assert_eq!(end, End::Mate, "SZ°Z50Z failed from {}", pos.to_fen());
                let (end, _) = play(&reg, pos, Winner::Dtm);
                if end != End::Mate {
                    dtm_fails.push((h, end, pos.to_fen()));
                }
            }
        }
    }
    assert!(games >= 300, "only {games} games");
    // SM⁻ (least DTM) ignores the counter, so some of these wins slip into 50-move draws: with
    // the fixed seeds, 4 of the starts at h = 90. It fails only through the rule and only with
    // plies already on the counter: the deepest DTM of these endgames is under 50 moves, so from
    // a fresh counter the fastest mate always comes in time.
    assert!(
        !dtm_fails.is_empty(),
        "SM⁻ won all {games} games: the positions no longer tell the strategies apart"
    );
    for (h, end, fen) in &dtm_fails {
        assert_eq!(*end, End::FiftyMoves, "SM⁻ from {fen}");
        assert!(*h > 0, "SM⁻ failed from a fresh counter: {fen}");
    }
}

#[test]
fn probe_agrees_with_generator_statistics_and_symmetry() {
    let s = setup();
    let (tb, _) = registry(&s.path);
    let reg = tb.snapshot();
    for sum in s.summaries.iter().filter(|s| s.material.men() >= 3) {
        let verify = sum.verify.as_ref().expect("verified");
        assert_eq!(verify.disagreements, 0);
        let m = sum.material;
        let index = EndgameIndex::new(&m);
        let info = fortress::egtb::report::info::tbinfo(&m.to_string(), &s.path, true).unwrap();
        let stats = info.stats.expect("tbinfo reads the stats");
        for &half in index.stored_halves() {
            let (mut w, mut d, mut l) = (0u64, 0u64, 0u64);
            let mut mismatched_flip = 0;
            for idx in 0..index.size(half) {
                let Some(tbp) = index.decode(half, idx) else {
                    continue;
                };
                let Ok(pos) = Position::from_fen(&fen_of(&tbp, 0)) else {
                    continue;
                };
                let p = reg
                    .probe(&pos)
                    .expect("every position of a present table probes");
                match p.wdl() {
                    Wdl::Win => w += 1,
                    Wdl::Draw => d += 1,
                    Wdl::Loss => l += 1,
                }
                // Colour flip (and, for sampled entries, board symmetry) give the same values.
                if idx % 7 == 0 {
                    if reg.probe(&pos.color_flipped()) != Some(p) {
                        mismatched_flip += 1;
                    }
                    let mut mirrored = tbp;
                    for c in 0..2 {
                        for k in 0..6 {
                            let b = tbp.pieces[c][k];
                            let mut mb = 0u64;
                            for sq in 0..64 {
                                if b.0 >> sq & 1 == 1 {
                                    mb |= 1 << (sq ^ 7); // mirror files
                                }
                            }
                            mirrored.pieces[c][k] = fortress::chess::Bitboard(mb);
                        }
                    }
                    mirrored.ep = None;
                    if let Ok(mp) = Position::from_fen(&fen_of(&mirrored, 0)) {
                        if tbp.ep.is_none() && reg.probe(&mp) != Some(p) {
                            mismatched_flip += 1;
                        }
                    }
                }
            }
            assert_eq!(mismatched_flip, 0, "{m} {}: symmetry", half.name());
            let st = &stats[half as usize];
            assert_eq!(
                (w, d, l),
                (st.wins, st.draws, st.losses),
                "{m} {} vs tbinfo",
                half.name()
            );
            if let Some(h) = &sum.halves[half as usize] {
                assert_eq!((w, d, l), (h.wins, h.draws, h.losses), "{m} vs generator");
            }
            let _ = Half::BOTH;
        }
    }
}

/// The search's verdict reads the WDL file first and the distances only for a win or loss: it
/// must be what the three values give, with the WDL files and without them (older directories,
/// whose DTZ and DTZ50 files hold both sides to move), at every counter; a damaged WDL file is
/// refused as a damaged DTM file is.
#[test]
fn the_search_verdict_reads_the_wdl_file_as_the_three_values_read() {
    let s = setup();
    let bare = tempfile::tempdir().unwrap();
    let damaged = tempfile::tempdir().unwrap();
    let mut copied = Vec::new();
    for name in ["KNK", "KBK", "KQK", "KRK", "KPK", "KQKN", "KRKN", "KRKR"] {
        let m = Material::parse(name).unwrap().canonical().0;
        if !s.path.join(format!("{m}.dtm.ftb")).is_file() {
            continue;
        }
        for metric in ["dtm", "dtz", "dtz50", "wdl"] {
            let f = format!("{m}.{metric}.ftb");
            if !s.path.join(&f).is_file() {
                continue;
            }
            std::fs::copy(s.path.join(&f), bare.path().join(&f)).unwrap();
            std::fs::copy(s.path.join(&f), damaged.path().join(&f)).unwrap();
        }
        copied.push(m);
    }
    // Older directories: both sides to move, no WDL files.
    for m in &copied {
        store_both_sides(bare.path(), m);
    }
    for m in &copied {
        std::fs::remove_file(bare.path().join(format!("{m}.wdl.ftb"))).unwrap();
    }
    assert!(
        s.path.join("KRKN.wdl.ftb").is_file(),
        "the generator writes WDL files"
    );
    let (with, _) = registry(&s.path);
    let (without, _) = registry(bare.path());
    let (with, without) = (with.snapshot(), without.snapshot());
    let mut checked = [0usize; 5];
    let mut by_one_ply = 0;
    for name in ENDGAMES {
        let m = Material::parse(name).unwrap();
        let index = EndgameIndex::new(&m);
        let t = with.endgame(&m.canonical().0).expect("tables open");
        for &h in index.stored_halves() {
            for i in (0..index.size(h)).step_by(37) {
                let Some(tb) = index.decode(h, i) else {
                    continue;
                };
                for clock in [0u16, 20, 60, 90, 99] {
                    let pos = Position::from_fen(&fen_of(&tb, clock)).unwrap();
                    let probe = with.probe(&pos);
                    // The side left out's answer by one ply, whether or not the header's
                    // deepest DTZ50 spares the verdict from asking.
                    let won = probe.map(|p| p.wdl50(0));
                    if t.zeroing_missing() == Some(h) && won.is_some_and(|w| w != Wdl::Draw) {
                        let left = 100 - clock;
                        let within =
                            zeroing_within(&pos, &tb, won == Some(Wdl::Win), left, t, &*with);
                        let expected = probe.unwrap().wdl50(clock) != Wdl::Draw;
                        assert_eq!(
                            within,
                            Some(expected),
                            "{name} {} #{i} at {clock}",
                            h.name()
                        );
                        by_one_ply += 1;
                    }
                    let expected = probe.and_then(|p| p.verdict(clock));
                    assert!(expected.is_some(), "{name} {} #{i}", h.name());
                    assert_eq!(with.verdict(&pos), expected, "{name} {} #{i}", h.name());
                    assert_eq!(without.verdict(&pos), expected, "{name} {} #{i}", h.name());
                    use fortress::egtb::play::probe::TableVerdict as V;
                    checked[match expected.unwrap() {
                        V::Win(_) => 0,
                        V::Loss(_) => 1,
                        V::CursedWin => 2,
                        V::BlessedLoss => 3,
                        V::Draw => 4,
                    }] += 1;
                }
            }
        }
    }
    // Every kind met: wins and losses, and those the counter spoils (KRKN's long wins at 90).
    assert!(checked.iter().all(|&n| n > 0), "{checked:?}");
    assert!(by_one_ply > 1000, "{by_one_ply} answers by one ply");

    let wdl = damaged.path().join("KRKN.wdl.ftb");
    let mut bytes = std::fs::read(&wdl).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0x11;
    std::fs::write(&wdl, bytes).unwrap();
    let (tb, msgs) = registry(damaged.path());
    let krkn = Position::from_fen("8/8/8/3n4/8/2k5/8/K6R w - - 0 1").unwrap();
    assert!(
        tb.snapshot().verdict(&krkn).is_none(),
        "damaged WDL file used"
    );
    let text = msgs.lock().unwrap().join("\n");
    assert!(text.contains("KRKN") && text.contains("checksum"), "{text}");
}

#[test]
fn damaged_missing_and_deleted_tables_are_refused_and_reported() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    for name in ["KQK", "KRK"] {
        for metric in ["dtm", "dtz", "dtz50", "wdl"] {
            let f = format!("{name}.{metric}.ftb");
            std::fs::copy(s.path.join(&f), dir.path().join(&f)).unwrap();
        }
    }
    // Truncate KRK's DTZ file and flip a byte in KQK's DTM payload.
    let krk = dir.path().join("KRK.dtz.ftb");
    let len = std::fs::metadata(&krk).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&krk).unwrap();
    f.set_len(len - 100).unwrap();
    drop(f);
    let kqk = dir.path().join("KQK.dtm.ftb");
    let mut bytes = std::fs::read(&kqk).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x55;
    std::fs::write(&kqk, bytes).unwrap();

    let (tb, msgs) = registry(dir.path());
    assert!(tb.snapshot().is_empty(), "damaged tables must not be used");
    let text = msgs.lock().unwrap().join("\n");
    assert!(text.contains("KRK") && text.contains("truncated"), "{text}");
    assert!(text.contains("KQK") && text.contains("checksum"), "{text}");

    // A path that does not exist.
    let (tb2, msgs2) = registry(&dir.path().join("no-such-dir"));
    assert!(tb2.snapshot().is_empty());
    assert!(msgs2.lock().unwrap().join("\n").contains("not a directory"));

    // A table deleted while the engine runs: readers holding the old snapshot keep working
    // (the mapping outlives the unlink), the rescan drops it and says so.
    let good = tempfile::tempdir().unwrap();
    for metric in ["dtm", "dtz", "dtz50", "wdl"] {
        let f = format!("KRK.{metric}.ftb");
        std::fs::copy(s.path.join(&f), good.path().join(&f)).unwrap();
    }
    let (tb3, msgs3) = registry(good.path());
    let mut reader = tb3.reader();
    let pos = Position::from_fen("8/8/8/8/8/2k5/8/K6R w - - 0 1").unwrap();
    let before = reader.probe(&pos).expect("KRK probes");
    std::fs::remove_file(good.path().join("KRK.dtz.ftb")).unwrap();
    let old = tb3.snapshot();
    assert_eq!(old.probe(&pos), Some(before), "old snapshot still reads");
    tb3.rescan();
    assert!(reader.probe(&pos).is_none(), "deleted table no longer used");
    assert!(msgs3.lock().unwrap().join("\n").contains("deleted"));
}

#[test]
fn engine_probe_cli_answers_each_line_and_agrees_with_the_registry() {
    use std::io::Write;
    let s = setup();
    let (tb, _) = registry(&s.path);
    let reg = tb.snapshot();
    let fens = [
        "8/8/8/8/8/2k5/8/K6R w - - 0 1",
        "8/1n6/8/3R4/8/7k/8/3K4 w - - 90 1",
        "8/8/8/4k3/8/8/2KQ4/8 b - - 0 1",
        "r3k3/8/8/8/8/8/8/4K3 b q - 0 1",
    ];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["probe", "--json", "--dir"])
        .arg(&s.path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(fens.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), fens.len(), "{text}");
    for (fen, line) in fens.iter().zip(&lines) {
        let json: serde_json::Value = serde_json::from_str(line).expect("one JSON object a line");
        assert_eq!(json["fen"], *fen, "{line}");
        let pos = Position::from_fen(fen).unwrap();
        match reg.probe(&pos) {
            Some(p) => {
                assert_eq!(json["wdl"], p.wdl().name(), "{line}");
                assert_eq!(json["wdl50"], p.wdl50(0).name(), "{line}");
                assert_eq!(json["dtm"], serde_json::json!(p.dtm_plies()), "{line}");
                assert!(json["best"].is_string(), "{line}");
                let moves = json["moves"].as_array().expect("moves");
                assert_eq!(
                    moves.len(),
                    fortress::chess::legal_moves(&pos).len(),
                    "{line}"
                );
            }
            None => assert!(json["error"].is_string(), "{line}"),
        }
    }
    assert_eq!(
        out.status.code(),
        Some(2),
        "a position not in the tables: exit 2"
    );
}

#[test]
fn search_scores_table_positions_with_the_real_counter() {
    use fortress::search::{Control, Engine, Limits, MATE, MATE_BOUND};
    let s = setup();
    let (tb, _) = registry(&s.path);
    let mut engine = Engine::new(16);
    engine.tables = Some(tb);
    let limits = Limits {
        depth: Some(6),
        ..Default::default()
    };
    let search = |fen: &str| {
        let pos = Position::from_fen(fen).unwrap();
        engine.search(&pos, &limits, &Control::new(false), &mut |_| {})
    };
    // KRK, DTM 14 moves = 27 plies, DTZ50 27: a mate score from a fresh counter...
    let r = search("8/8/8/8/8/2k5/8/K6R w - - 0 1");
    assert_eq!(r.score, MATE - 27);
    // ...a draw with a small bonus once the rule cannot be met (h = 90 leaves 10 plies).
    let r = search("8/8/8/8/8/2k5/8/K6R w - - 90 1");
    assert_eq!(r.score, 2);
    // Interior nodes: the root (KRKN with a knight en prise) is searched with KRKN's table
    // absent; the capture leads into KRK, probed inside the search with its own counter.
    let dir = tempfile::tempdir().unwrap();
    for name in ["KRK", "KNK"] {
        for metric in ["dtm", "dtz", "dtz50", "wdl"] {
            let f = format!("{name}.{metric}.ftb");
            std::fs::copy(s.path.join(&f), dir.path().join(&f)).unwrap();
        }
    }
    let (tb2, _) = registry(dir.path());
    let mut engine = Engine::new(16);
    engine.tables = Some(tb2);
    let pos = Position::from_fen("8/3n4/8/3R4/8/7k/8/3K4 w - - 95 1").unwrap();
    let r = engine.search(&pos, &limits, &Control::new(false), &mut |_| {});
    assert!(
        r.score > MATE_BOUND,
        "capture into a won KRK scores as a mate: {}",
        r.score
    );
    assert_eq!(r.best.unwrap().to_string(), "d5d7");
}
