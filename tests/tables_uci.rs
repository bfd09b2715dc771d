//! Endgame tables through UCI (issue #6): a game that reaches a 4-man ending with no table, the
//! table built in the background during the game and probed by later moves (`tbhits`, mate
//! scores); the search speed while it is built; quitting mid-generation leaves no partial file
//! with a table's name; a corrupt table and a missing `NalimovPath` are reported and the engine
//! keeps playing. A root in the tables answers as a search would: MultiPV lines in the
//! strategy's order, the depth `go depth` asked for, no bestmove before `stop` or `ponderhit`,
//! mates past 127 moves in full.

#[path = "common/made_up_table.rs"]
mod made_up_table;
#[path = "common/uci_driver.rs"]
mod uci_driver;

use fortress::chess::{legal_moves, parse_uci_move, Position};
use fortress::egtb::format::{Compression, Metric, Outcome, TableFile, TbValue};
use fortress::egtb::generate::{gentb, GenOptions};
use fortress::egtb::play::strategy::analyse_root;
use fortress::egtb::play::strategy::rank;
use fortress::egtb::{Half, Material, Tablebases, Wdl};
use std::path::Path;
use std::time::{Duration, Instant};
use uci_driver::{field, Engine};

fn three_man(dir: &Path) {
    let targets: Vec<Material> = ["KRK", "KNK"]
        .iter()
        .map(|n| Material::parse(n).unwrap())
        .collect();
    let opts = GenOptions::new(dir);
    gentb(&targets, &opts, &mut |_| {}).unwrap();
}

const MIDDLEGAME: &str =
    "position fen r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
const KRNK: &str = "8/8/8/8/3k4/8/1K6/R1N5 w - - 0 1";

fn nps(lines: &[String]) -> u64 {
    lines
        .iter()
        .rev()
        .filter(|l| l.starts_with("info depth"))
        .find_map(|l| field(l, "nps"))
        .unwrap_or(0)
}

#[test]
fn table_built_in_background_during_a_game_then_probed() {
    let dir = tempfile::tempdir().unwrap();
    three_man(dir.path());

    // Speed with no generation running.
    let mut e = Engine::with_tables(dir.path());
    e.send("setoption name GenerateMissingTables value false");
    e.ready();
    let (_, quiet) = e.go(MIDDLEGAME, "go movetime 2000");
    e.quit();

    let mut e = Engine::with_tables(dir.path());
    e.send("setoption name GenerateMaxMen value 4");
    e.ready();
    // The game reaches KRNK with no table: the search asks for it.
    let mut pos = Position::from_fen(KRNK).unwrap();
    let mut moves: Vec<String> = Vec::new();
    let (best, lines) = e.go(&format!("position fen {KRNK}"), "go movetime 300");
    let all: Vec<String> = lines.clone();
    assert!(
        all.iter()
            .any(|l| l.contains("info string generating table KRNK")),
        "{all:?}"
    );
    moves.push(best.clone());
    pos.make_move(parse_uci_move(&pos, &best).unwrap());
    // While it is built: the search speed.
    let (_, busy) = e.go(MIDDLEGAME, "go movetime 2000");
    println!(
        "search speed: {} nps with no generation, {} nps while KRNK is built",
        nps(&quiet),
        nps(&busy)
    );
    // Wait for the worker (the GUI keeps sending isready between moves).
    let start = Instant::now();
    let mut ready = busy.iter().any(|l| l.contains("table KRNK ready"));
    while !ready && start.elapsed() < Duration::from_secs(600) {
        std::thread::sleep(Duration::from_millis(500));
        ready = e.ready().iter().any(|l| l.contains("table KRNK ready"));
    }
    println!(
        "KRNK ready {:.1} s after the first search",
        start.elapsed().as_secs_f64()
    );
    // Later moves of the game probe the new table.
    let mut probed = false;
    for _ in 0..3 {
        if legal_moves(&pos).is_empty() {
            break;
        }
        let (best, lines) = e.go(
            &format!("position fen {KRNK} moves {}", moves.join(" ")),
            "go movetime 300",
        );
        let last_info = lines.iter().rev().find(|l| l.starts_with("info depth"));
        if let Some(l) = last_info {
            if field(l, "tbhits").unwrap_or(0) > 0 && l.contains("score mate") {
                probed = true;
            }
        }
        pos.make_move(parse_uci_move(&pos, &best).expect("legal bestmove"));
        moves.push(best);
    }
    assert!(ready, "KRNK never finished");
    assert!(probed, "no later move showed tbhits with a mate score");
    assert!(dir.path().join("KRNK.dtm.ftb").is_file());
    e.quit();
}

#[test]
fn quitting_mid_generation_leaves_no_table_and_damage_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    three_man(dir.path());
    let mut e = Engine::with_tables(dir.path());
    e.ready();
    let announce = "info string generating table KRBK";
    let (_, lines) = e.go(
        "position fen 8/8/8/8/3k4/8/1K6/R1B5 w - - 0 1",
        "go movetime 200",
    );
    // On a loaded machine the announcement may come after the bestmove.
    if !lines.iter().any(|l| l.starts_with(announce)) {
        e.until(announce, Duration::from_secs(60));
    }
    e.quit();
    // Whenever the quit came, every file with a table's name is complete and valid; the
    // unfinished metrics have none (a temporary name, removed by the next run).
    let mut complete = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "ftb") {
            TableFile::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            complete += path.to_string_lossy().contains("KRBK.") as usize;
        }
    }
    eprintln!("KRBK files complete at quit: {complete} of 3");

    // A corrupt table is reported and not used; the engine still plays a legal move.
    let krk = dir.path().join("KRK.dtz50.ftb");
    let mut bytes = std::fs::read(&krk).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(&krk, bytes).unwrap();
    let mut e = Engine::start();
    e.send("setoption name GenerateMissingTables value false");
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().display()
    ));
    let seen = e.ready();
    assert!(
        seen.iter()
            .any(|l| l.starts_with("info string") && l.contains("KRK") && l.contains("checksum")),
        "{seen:?}"
    );
    let fen = "8/8/8/8/8/2k5/8/K6R w - - 0 1";
    let (best, lines) = e.go(&format!("position fen {fen}"), "go depth 8");
    let pos = Position::from_fen(fen).unwrap();
    assert!(parse_uci_move(&pos, &best).is_some(), "{best}");
    assert!(lines
        .iter()
        .all(|l| !l.contains("tbhits") || field(l, "tbhits") == Some(0)));

    // A NalimovPath that does not exist.
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().join("missing").display()
    ));
    let seen = e.ready();
    assert!(
        seen.iter().any(|l| l.contains("not a directory")),
        "{seen:?}"
    );
    let (best, _) = e.go(&format!("position fen {fen}"), "go depth 6");
    assert!(parse_uci_move(&pos, &best).is_some());
    e.quit();
}

/// KRK with the rook out of the black king's reach: White to move wins, Black to move loses.
const KRK_WTM: &str = "8/8/8/8/8/2k5/8/K6R w - - 0 1";
const KRK_BTM: &str = "8/8/8/8/8/2k5/8/K6R b - - 0 1";

/// The generated 3-man tables (KRK, KNK and what they need) in a fresh directory, and an engine
/// probing them.
fn three_man_engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    three_man(dir.path());
    let e = engine_on(dir.path());
    (dir, e)
}

/// An engine probing the tables of `dir` only, building none.
fn engine_on(dir: &Path) -> Engine {
    let mut e = Engine::start();
    e.send("setoption name GenerateMissingTables value false");
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.display()
    ));
    e.ready();
    e
}

/// The root moves of `fen` in the strategy's order, each with the `score mate N` its table
/// values give (all of them are mates in the KRK positions used here).
fn strategy_lines(dir: &Path, fen: &str) -> Vec<(String, i64)> {
    let tb = Tablebases::new();
    tb.set_path(vec![dir.to_path_buf()]);
    let pos = Position::from_fen(fen).unwrap();
    let a = analyse_root(&tb.snapshot(), &pos, true).expect("KRK is in the tables");
    let values: Vec<_> = a.moves.iter().map(|m| m.1).collect();
    rank(pos.halfmove_clock(), &values)
        .into_iter()
        .map(|i| {
            let (m, v) = a.moves[i];
            assert_ne!(v.v.wdl50(pos.halfmove_clock()), Wdl::Draw);
            let mate = match v.v.dtm.outcome() {
                Outcome::Win(n) => n as i64,
                Outcome::Loss(n) => -(n as i64),
                other => panic!("{m}: {other:?}"),
            };
            (m.to_string(), mate)
        })
        .collect()
}

/// The `score mate` of an info line.
fn mate_of(line: &str) -> Option<i64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.windows(2).position(|w| w == ["score", "mate"])?;
    words.get(at + 2)?.parse().ok()
}

/// The first move of an info line's PV.
fn pv_move(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == "pv")?;
    words.next()
}

/// The info line of `multipv k`, the last one if there are several.
fn multipv_line(lines: &[String], k: usize) -> Option<&String> {
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth") && field(l, "multipv") == Some(k as u64))
}

#[test]
fn table_root_multipv_lists_the_strategys_moves_in_order() {
    let (dir, mut e) = three_man_engine();
    for fen in [KRK_WTM, KRK_BTM] {
        let want = strategy_lines(dir.path(), fen);
        assert!(want.len() >= 4, "{fen}: {want:?}");
        e.send("setoption name MultiPV value 4");
        let (best, lines) = e.go(&format!("position fen {fen}"), "go wtime 10000 btime 10000");
        assert_eq!(best, want[0].0, "{fen}: {lines:?}");
        for (k, (mv, mate)) in want.iter().take(4).enumerate() {
            let line = multipv_line(&lines, k + 1)
                .unwrap_or_else(|| panic!("{fen}: no multipv {}: {lines:?}", k + 1));
            assert_eq!(pv_move(line), Some(mv.as_str()), "{fen}: {line}");
            assert_eq!(mate_of(line), Some(*mate), "{fen}: {line}");
        }
        assert!(multipv_line(&lines, 5).is_none(), "{lines:?}");
        // MultiPV 1: the same move, one line.
        e.send("setoption name MultiPV value 1");
        let (one, lines) = e.go(&format!("position fen {fen}"), "go wtime 10000 btime 10000");
        assert_eq!(one, best);
        assert!(multipv_line(&lines, 2).is_none(), "{lines:?}");
    }
    e.quit();
}

#[test]
fn table_root_line_ends_at_a_draw_by_rule() {
    let (_dir, mut e) = three_man_engine();
    e.send("setoption name MultiPV value 20");
    // KNK, every move drawn by the tables. The PV of each root move, by its first move.
    let mut lines_of = |position: &str| {
        let (_, lines) = e.go(position, "go depth 3");
        lines
            .iter()
            .filter(|l| l.starts_with("info depth"))
            .map(|l| {
                let pv: Vec<String> = l
                    .split_whitespace()
                    .skip_while(|w| *w != "pv")
                    .skip(1)
                    .map(str::to_string)
                    .collect();
                (pv[0].clone(), pv.len())
            })
            .collect::<std::collections::HashMap<String, usize>>()
    };
    // The root seen before with the king on a1: after a1b1 the position repeats, and the line
    // stops there, as the search's lines do; a1a2 leads somewhere new and has the reply.
    let pvs = lines_of("position fen 8/8/8/8/8/2k5/8/K5N1 w - - 0 80 moves a1b1 c3d2 b1a1 d2c3");
    assert_eq!(pvs.get("a1b1"), Some(&1), "{pvs:?}");
    assert_eq!(pvs.get("a1a2"), Some(&2), "{pvs:?}");
    // The fifty-move rule after any move: no line goes past it.
    let pvs = lines_of("position fen 8/8/8/8/8/2k5/8/K5N1 w - - 99 80");
    assert!(pvs.len() >= 5 && pvs.values().all(|&n| n == 1), "{pvs:?}");
    e.quit();
}

#[test]
fn table_root_go_depth_answers_promptly_at_the_depth_asked() {
    let (dir, mut e) = three_man_engine();
    let want = strategy_lines(dir.path(), KRK_WTM);
    for depth in [1, 5, 40] {
        let start = Instant::now();
        e.send(&format!("position fen {KRK_WTM}"));
        e.send(&format!("go depth {depth}"));
        // A 40-ply search would run for hours; the table answers at once. The bound is loose
        // because the tests share a loaded 2-core machine.
        let (best, lines) = e.bestmove(Duration::from_secs(30));
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(best, want[0].0);
        let info = multipv_line(&lines, 1).expect("an info line");
        assert_eq!(field(info, "depth"), Some(depth), "{info}");
        assert!(field(info, "seldepth").unwrap() >= depth, "{info}");
        assert_eq!(mate_of(info), Some(want[0].1), "{info}");
        assert!(field(info, "tbhits").unwrap() > 0, "{info}");
    }
    // A node limit is met at once too.
    let (best, _) = e.go(&format!("position fen {KRK_WTM}"), "go nodes 1");
    assert_eq!(best, want[0].0);
    e.quit();
}

#[test]
fn table_root_waits_for_stop_and_ponderhit() {
    let (dir, mut e) = three_man_engine();
    let want = strategy_lines(dir.path(), KRK_WTM);
    e.send(&format!("position fen {KRK_WTM}"));
    e.send("go infinite");
    let early = e.no_bestmove_for(Duration::from_millis(600));
    assert!(multipv_line(&early, 1).is_some(), "{early:?}");
    let seen = e.ready();
    assert!(!seen.iter().any(|l| l.starts_with("bestmove")), "{seen:?}");
    e.send("stop");
    let (best, lines) = e.bestmove(Duration::from_secs(20));
    assert_eq!(best, want[0].0);
    // The strategy's reply comes with it, so that the GUI can ponder on it.
    let words: Vec<&str> = lines.last().unwrap().split_whitespace().collect();
    assert_eq!(words.get(2), Some(&"ponder"), "{words:?}");
    let mut pos = Position::from_fen(KRK_WTM).unwrap();
    pos.make_move(parse_uci_move(&pos, &best).unwrap());
    let reply = parse_uci_move(&pos, words[3]).expect("a legal ponder move");
    pos.make_move(reply);

    // Pondering on the reply: no bestmove until ponderhit.
    e.send(&format!("position fen {KRK_WTM} moves {best} {}", words[3]));
    e.send("go ponder wtime 1000 btime 1000");
    e.no_bestmove_for(Duration::from_millis(600));
    e.send("ponderhit");
    let (best, _) = e.bestmove(Duration::from_secs(20));
    assert!(parse_uci_move(&pos, &best).is_some(), "{best}");
    e.quit();
}

/// A KRK table that is wrong but simple: every White-to-move position wins with mate in
/// `moves`, every Black-to-move position loses in `moves - 1`, each with a zeroing move in
/// reach (DTZ and DTZ50 of one or two plies), so every root move is a mate in `moves` for
/// either side. Real tables of up to five men have no mate this long.
fn krk_mating_in(dir: &Path, moves: u16) {
    for metric in Metric::ALL {
        let (win, loss) = match metric {
            Metric::Dtm => (TbValue::win(moves), TbValue::loss(moves - 1)),
            _ => (TbValue::win(1), TbValue::loss(2)),
        };
        let (win, loss) = (win.unwrap(), loss.unwrap());
        made_up_table::write(dir, "KRK", metric, Compression::Zstd, |h, _| {
            if h == Half::Wtm {
                win
            } else {
                loss
            }
        });
    }
}

#[test]
fn table_mates_longer_than_127_moves_print_in_full() {
    // 150: past the i8 of vampirc-uci; 600: past the 500 moves the mate range once held.
    for moves in [150u16, 600] {
        let dir = tempfile::tempdir().unwrap();
        krk_mating_in(dir.path(), moves);
        let mut e = engine_on(dir.path());
        for (fen, mate) in [(KRK_WTM, moves as i64), (KRK_BTM, -(moves as i64))] {
            let (_, lines) = e.go(&format!("position fen {fen}"), "go depth 3");
            let info = multipv_line(&lines, 1).expect("an info line");
            assert_eq!(mate_of(info), Some(mate), "{info}");
            assert!(info.contains(&format!(" score mate {mate} ")), "{info}");
        }
        e.quit();
    }
}
