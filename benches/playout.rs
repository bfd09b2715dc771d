//! Play-outs (issues #6, #23): from random positions won under the 50-move rule (half-move
//! clocks 0, 20, 60, 90) and from the paper's Table 6 positions of the endgame, SZ°Z50Z against
//! the perfect defender, and SM⁻ (least DTM) and SZ⁻ (least DTZ) against the same defender,
//! counting the games each fails to win (Bourzutschky, Tamplin, Haworth 2005, Section 5: SZ50⁻
//! keeps every win; strategies without DTZ50 need not, and in KBBKNN do not).
//! Run: `cargo bench --bench playout -- DIR [ENDGAME ...]` (default KBBKN KNNKP KQKRP KRPKR);
//! missing tables of at most five men are generated into DIR first (`engine gentb` does the
//! same; six-man ones must be built beforehand). Env PLAYOUT_GAMES: random positions per endgame
//! and clock (default 50).

#[path = "../tests/common/bench_args.rs"]
mod bench_args;
#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::chess::Position;
use fortress::egtb::generate::{gentb, GenOptions};
use fortress::egtb::play::probe::{Registry, Tablebases, Wdl};
use fortress::egtb::report::paper::Paper;
use fortress::egtb::Material;
use playout::{play, won_positions, End, Winner};
use std::time::Instant;

fn main() {
    let (dir, mut names) = bench_args::dir_and_endgames("playout");
    if names.is_empty() {
        names = ["KBBKN", "KNNKP", "KQKRP", "KRPKR"]
            .map(String::from)
            .to_vec();
    }
    let games: usize = std::env::var("PLAYOUT_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    // Six-man tables take too long to build as a side effect: they must be present.
    let targets: Vec<Material> = names
        .iter()
        .map(|n| Material::parse(n).expect("endgame"))
        .filter(|m| m.men() <= 5)
        .collect();
    let t = Instant::now();
    let opts = GenOptions::new(&dir);
    gentb(&targets, &opts, &mut |s| {
        if s.built {
            println!("built {} in {:.1} s", s.material, s.seconds)
        }
    })
    .expect("tables");
    println!("tables ready in {:.1} s", t.elapsed().as_secs_f64());
    let tb = Tablebases::new();
    tb.set_path(vec![dir]);
    let reg = tb.snapshot();
    let paper = Paper::load().expect("the paper's tables");
    println!("endgame  clock  games  SZ°Z50Z-fails  SM⁻-fails  SZ⁻-fails  longest  seconds");
    let (mut games_all, mut fails_all) = (0, [0; 3]);
    for (e, name) in names.iter().enumerate() {
        let material = Material::parse(name).expect("endgame");
        for (k, h) in [0u16, 20, 60, 90].into_iter().enumerate() {
            let positions = won_positions(&reg, name, h, games, 0xC0FFEE + (e * 16 + k) as u64);
            assert!(
                !positions.is_empty(),
                "no won position of {name} found: are its tables in the directory?"
            );
            let t = Instant::now();
            let row = play_all(&reg, &positions);
            games_all += positions.len();
            for (a, f) in fails_all.iter_mut().zip(row.fails) {
                *a += f;
            }
            print_row(name, &h.to_string(), positions.len(), &row, t);
        }
        for (key, fen) in paper.example_positions(&material) {
            for h in [0u16, 20, 60, 90] {
                let fen = with_clock(fen, h);
                let pos = Position::from_fen(&fen).expect("Table 6 FEN");
                let won = reg.probe(&pos).is_some_and(|p| p.wdl50(h) == Wdl::Win);
                if !won {
                    println!("{key:<8} {h:>5}  not won under the 50-move rule at this clock");
                    continue;
                }
                let t = Instant::now();
                let row = play_all(&reg, std::slice::from_ref(&pos));
                print_row(key, &h.to_string(), 1, &row, t);
            }
        }
    }
    println!(
        "random starts {games_all}: SZ°Z50Z failed {}, SM⁻ {}, SZ⁻ {}",
        fails_all[0], fails_all[1], fails_all[2]
    );
}

struct Row {
    /// Games not won: SZ°Z50Z, SM⁻, SZ⁻.
    fails: [usize; 3],
    /// Plies of the longest SZ°Z50Z game.
    longest: usize,
}

fn play_all(reg: &Registry, positions: &[Position]) -> Row {
    let mut row = Row {
        fails: [0; 3],
        longest: 0,
    };
    for p in positions {
        for (k, strategy) in [Winner::Sz50, Winner::Dtm, Winner::Dtz]
            .into_iter()
            .enumerate()
        {
            let (end, plies) = play(reg, p, strategy);
            if strategy == Winner::Sz50 {
                row.longest = row.longest.max(plies);
                if end != End::Mate {
                    println!("SZ°Z50Z failed ({end:?}) from {}", p.to_fen());
                }
            }
            if end != End::Mate {
                row.fails[k] += 1;
            }
        }
    }
    row
}

fn print_row(name: &str, clock: &str, games: usize, row: &Row, t: Instant) {
    let [sz, sm, szm] = row.fails;
    println!(
        "{name:<8} {clock:>5}  {games:>5}  {sz:>13}  {sm:>9}  {szm:>9}  {:>7}  {:>7.1}",
        row.longest,
        t.elapsed().as_secs_f64()
    );
}

/// `fen` with its half-move counter set to `h`.
fn with_clock(fen: &str, h: u16) -> String {
    let mut fields: Vec<&str> = fen.split_whitespace().collect();
    let h = h.to_string();
    if fields.len() >= 5 {
        fields[4] = &h;
    }
    fields.join(" ")
}
