//! Play-outs over 5-man endgames (issue #6): from random positions won under the 50-move rule
//! (half-move clocks 0, 20, 60, 90), SZ°Z50Z against the perfect defender, and SM⁻ (least DTM)
//! against the same defender, counting the games each fails to win (Bourzutschky, Tamplin,
//! Haworth 2005, Section 5: SZ50⁻ keeps every win; SM⁻ need not).
//! Run: `cargo bench --bench playout -- DIR [ENDGAME ...]` (default KBBKN KNNKP KQKRP KRPKR);
//! missing tables are generated into DIR first (`engine gentb` does the same). Env
//! PLAYOUT_GAMES: positions per endgame and clock (default 50).

#[path = "../tests/common/bench_args.rs"]
mod bench_args;
#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::egtb::generate::{gentb, GenOptions};
use fortress::egtb::probe::Tablebases;
use fortress::egtb::Material;
use playout::{play, won_positions, End};
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
    let targets: Vec<Material> = names
        .iter()
        .map(|n| Material::parse(n).expect("endgame"))
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
    println!("endgame  clock  games  SZ°Z50Z-fails  SM⁻-fails  longest");
    for (e, name) in names.iter().enumerate() {
        for (k, h) in [0u16, 20, 60, 90].into_iter().enumerate() {
            let positions = won_positions(&reg, name, h, games, 0xC0FFEE + (e * 16 + k) as u64);
            let (mut f_sz, mut f_dtm, mut longest) = (0, 0, 0);
            for p in &positions {
                let (end, plies) = play(&reg, p, false);
                longest = longest.max(plies);
                if end != End::Mate {
                    f_sz += 1;
                }
                if play(&reg, p, true).0 != End::Mate {
                    f_dtm += 1;
                }
            }
            println!(
                "{name:<8} {h:>5}  {:>5}  {f_sz:>13}  {f_dtm:>9}  {longest:>7}",
                positions.len()
            );
        }
    }
}
