//! Syzygy tables beside Fortress's own (`egtb::play::syzygy`), against the engine's own tables of the
//! same endgames, which are independent of them (another generator, another metric):
//! 1. agreement: random positions of every endgame of 3-4 men found in DIR, and of the endgames
//!    named, with a fresh half-move counter; Syzygy's WDL (cursed wins and blessed losses apart)
//!    must equal the result the own tables give with and without the 50-move rule;
//! 2. cost: Syzygy probes a second, and the conversion of a position (its eight bitboards);
//! 3. play-outs with only Syzygy: the engine (search and Syzygy's root filter, `PLAYOUT_NODES`
//!    nodes a move) plays random won and drawn positions of the five-man endgames named, at
//!    half-move clocks 0 and 90, against the perfect opponent (SZ°Z50Z on the own tables). A won
//!    game must end in mate, a drawn one must never lose.
//!
//! Run: `cargo bench --bench syzygy -- DIR SYZYGY_DIR [ENDGAME ...]`. Env `SYZYGY_POSITIONS`:
//! positions per endgame for the agreement (default 300); `PLAYOUT_GAMES`: games per endgame,
//! clock and result (default 10); `PLAYOUT_NODES`: nodes per engine move (default 20000).

#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::chess::{legal_moves, PieceType, Position};
use fortress::egtb::format::Wdl5;
use fortress::egtb::play::probe::{Registry, Tablebases, TbProbe, Wdl};
use fortress::egtb::play::strategy::analyse_root;
use fortress::egtb::play::strategy::choose;
use fortress::egtb::play::syzygy::{split_path, Syzygy};
use fortress::egtb::{EndgameIndex, Material};
use fortress::search::{Control, Engine, Limits, SyzygyUse};
use std::hint::black_box;
use std::time::Instant;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Syzygy's name of the result the own tables give (a fresh counter).
fn expected(p: &TbProbe) -> Wdl5 {
    match (p.wdl(), p.wdl50(0)) {
        (Wdl::Win, Wdl::Win) => Wdl5::Win,
        (Wdl::Win, _) => Wdl5::CursedWin,
        (Wdl::Loss, Wdl::Loss) => Wdl5::Loss,
        (Wdl::Loss, _) => Wdl5::BlessedLoss,
        (Wdl::Draw, _) => Wdl5::Draw,
    }
}

/// Random legal positions of `m` (counter `h`, side to move from the half drawn) that the own
/// tables cover, with their values.
fn random_positions(
    reg: &Registry,
    m: &Material,
    h: u16,
    n: usize,
    seed: u64,
    keep: &dyn Fn(&Position, &TbProbe) -> bool,
) -> Vec<(Position, TbProbe)> {
    let index = EndgameIndex::new(m);
    let halves = index.stored_halves();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    for _ in 0..n * 2_000 {
        if out.len() == n {
            break;
        }
        let half = halves[rng.usize(..halves.len())];
        let Some(tb) = index.decode(half, rng.u64(..index.size(half))) else {
            continue;
        };
        let Ok(pos) = Position::from_fen(&playout::fen_of(&tb, h)) else {
            continue;
        };
        if legal_moves(&pos).is_empty() {
            continue;
        }
        if let Some(p) = reg.probe(&pos) {
            if keep(&pos, &p) {
                out.push((pos, p));
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.len() < 2 {
        eprintln!("skipped: cargo bench --bench syzygy -- DIR SYZYGY_DIR [ENDGAME ...]");
        return;
    }
    let tb = Tablebases::new();
    tb.set_path(vec![args[0].clone().into()]);
    let reg = tb.snapshot();
    let syzygy = Syzygy::open(&split_path(&args[1])).expect("Syzygy tables");
    println!("{}", syzygy.describe());

    let mut names: Vec<String> = std::fs::read_dir(&args[0])
        .expect("DIR")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".dtm.ftb").map(str::to_string))
        .filter(|n| Material::parse(n).is_ok_and(|m| m.men() <= 4))
        .collect();
    names.sort();
    names.extend(args[2..].iter().cloned());

    // 1. Agreement.
    let per = env("SYZYGY_POSITIONS", 300);
    let (mut total, mut differ, mut missing) = (0usize, 0usize, 0usize);
    let mut all = Vec::new();
    let mut by_result = [0usize; 5];
    for (k, name) in names.iter().enumerate() {
        let m = Material::parse(name).expect("endgame");
        let positions = random_positions(&reg, &m, 0, per, 0x5EED + k as u64, &|_, _| true);
        let mut bad = 0;
        for (pos, p) in &positions {
            let want = expected(p);
            by_result[want as usize] += 1;
            match syzygy.wdl(pos) {
                Some(got) if got == want => {}
                Some(got) => {
                    bad += 1;
                    if bad <= 3 {
                        println!("  {name}: {} own {want:?} Syzygy {got:?}", pos.to_fen());
                    }
                }
                None => {
                    missing += 1;
                    if missing <= 3 {
                        println!("  {name}: {} not covered by Syzygy", pos.to_fen());
                    }
                }
            }
        }
        println!("{name:<8} {:>5} positions, {bad} differ", positions.len());
        total += positions.len();
        differ += bad;
        all.extend(positions.into_iter().map(|(pos, _)| pos));
    }
    println!(
        "agreement: {total} positions in {} endgames ({} losses, {} blessed losses, {} draws, \
         {} cursed wins, {} wins by the own tables): {differ} differ, {missing} not covered",
        names.len(),
        by_result[0],
        by_result[1],
        by_result[2],
        by_result[3],
        by_result[4]
    );

    // 2. Cost, over the same positions (their tables already mapped by the agreement pass).
    let rounds = 20;
    let t = Instant::now();
    for _ in 0..rounds {
        for pos in &all {
            black_box(syzygy.wdl(black_box(pos)));
        }
    }
    let probe_ns = t.elapsed().as_nanos() as f64 / (rounds * all.len()) as f64;
    let t = Instant::now();
    for _ in 0..rounds * 10 {
        for pos in &all {
            // What a probe converts: the colours and the six kinds, as `egtb::play::syzygy` reads them.
            let mut x = pos.color_bb(fortress::chess::Color::White).0
                ^ pos.color_bb(fortress::chess::Color::Black).0;
            for kind in PieceType::ALL {
                x ^= pos.kind_bb(kind).0;
            }
            black_box(x);
        }
    }
    let convert_ns = t.elapsed().as_nanos() as f64 / (rounds * 10 * all.len()) as f64;
    println!(
        "cost: {probe_ns:.0} ns a Syzygy WDL probe ({:.2} M a second, one thread), of which \
         about {convert_ns:.1} ns convert the position",
        1e3 / probe_ns
    );

    // 3. Play-outs with only Syzygy.
    let games = env("PLAYOUT_GAMES", 10);
    let nodes = env("PLAYOUT_NODES", 20_000) as u64;
    let mut engine = Engine::new(16);
    engine.syzygy = Some(SyzygyUse::defaults(syzygy));
    let five: Vec<&String> = args[2..]
        .iter()
        .filter(|n| Material::parse(n).is_ok_and(|m| m.men() == 5))
        .collect();
    println!("endgame  clock  result  games  failed  longest  seconds");
    let (mut played, mut failed) = (0, 0);
    for (k, name) in five.iter().enumerate() {
        let m = Material::parse(name).expect("endgame");
        for h in [0u16, 90] {
            for want in [Wdl::Win, Wdl::Draw] {
                let seed = 0xF00D + (k * 4) as u64 + h as u64 + want as u64;
                let positions = random_positions(&reg, &m, h, games, seed, &|pos, p| {
                    p.wdl50(h) == want && (want == Wdl::Win || can_lose(&reg, pos))
                });
                let t = Instant::now();
                let (mut bad, mut longest) = (0, 0);
                for (pos, _) in &positions {
                    let (ok, plies) = play(&engine, &reg, pos, want, nodes);
                    longest = longest.max(plies);
                    if !ok {
                        bad += 1;
                        println!("  failed from {}", pos.to_fen());
                    }
                }
                println!(
                    "{name:<8} {h:>5}  {:<6}  {:>5}  {bad:>6}  {longest:>7}  {:>7.1}",
                    want.name(),
                    positions.len(),
                    t.elapsed().as_secs_f64()
                );
                played += positions.len();
                failed += bad;
            }
        }
    }
    println!("play-outs: {played} games, {failed} failed");
}

/// Does `pos` (drawn) have a move that loses under the 50-move rule? Only such draws test the
/// engine.
fn can_lose(reg: &Registry, pos: &Position) -> bool {
    analyse_root(reg, pos, false).is_some_and(|a| {
        a.moves
            .iter()
            .any(|(_, v)| v.v.wdl50(pos.halfmove_clock()) == Wdl::Loss)
    })
}

/// Plays `start` (the engine to move, `want` its result under the rule) against the perfect
/// opponent. True if a win ends in mate or a draw is never lost; and the plies played.
fn play(engine: &Engine, reg: &Registry, start: &Position, want: Wdl, nodes: u64) -> (bool, usize) {
    engine.clear_hash();
    let mut pos = start.clone();
    let us = pos.side_to_move();
    for ply in 0..400 {
        let moves = legal_moves(&pos);
        if moves.is_empty() {
            let mated_them = pos.in_check() && pos.side_to_move() != us;
            return (
                if want == Wdl::Win {
                    mated_them
                } else {
                    !pos.in_check()
                },
                ply,
            );
        }
        if pos.halfmove_clock() >= 100 || pos.insufficient_material() || pos.repetitions() >= 2 {
            if want == Wdl::Win && std::env::var("PLAYOUT_DEBUG").is_ok() {
                println!(
                    "  drawn (clock, material or repetition) at {}",
                    pos.to_fen()
                );
            }
            return (want == Wdl::Draw, ply);
        }
        if pos.side_to_move() == us {
            let limits = Limits {
                nodes: Some(nodes),
                ..Default::default()
            };
            let control = Control::new(false);
            let best = engine.search(&pos, &limits, &control, &mut |_| {}).best;
            pos.make_move(best.expect("a legal move"));
            // The result must hold after every move of ours, judged with the real counter.
            if let Some(p) = reg.probe(&pos) {
                let them = p.wdl50(pos.halfmove_clock());
                let held = match want {
                    Wdl::Win => them == Wdl::Loss,
                    _ => them != Wdl::Win,
                };
                if !held {
                    if std::env::var("PLAYOUT_DEBUG").is_ok() {
                        println!("  lost the result at {} after {:?}", pos.to_fen(), best);
                    }
                    return (false, ply + 1);
                }
            }
        } else {
            let drawn = reg
                .probe(&pos)
                .is_some_and(|p| p.wdl50(pos.halfmove_clock()) == Wdl::Draw);
            let Some(a) = analyse_root(reg, &pos, drawn) else {
                return (false, ply);
            };
            let values: Vec<_> = a.moves.iter().map(|m| m.1).collect();
            let i = choose(pos.halfmove_clock(), &values).expect("a move").best;
            pos.make_move(a.moves[i].0);
        }
    }
    (false, 400)
}
