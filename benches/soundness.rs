//! The recognizers against 5-man tables (issue #7; `tests/generator.rs` does every 3- and 4-man
//! table): every bound a recognizer claims, on every position of each table in DIR with each
//! colouring, must hold for the table's result. Prints claims and wrong claims per table and
//! exits with status 1 if any claim is wrong.
//! Run: `cargo bench --bench soundness -- DIR [ENDGAME ...]` (default: every table in DIR).

#[path = "../tests/common/bench_args.rs"]
mod bench_args;
#[path = "../tests/common/soundness.rs"]
mod soundness;

use fortress::egtb::{EndgameTables, Material};
use std::time::Instant;

fn main() {
    let (dir, named) = bench_args::dir_and_endgames("soundness");
    let names: Vec<String> = if !named.is_empty() {
        named
    } else {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .expect("table directory")
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".dtm.ftb").map(str::to_string)
            })
            .collect();
        v.sort();
        v
    };
    let mut wrong = 0;
    for name in &names {
        let m = Material::parse(name).expect("endgame name");
        let t = match EndgameTables::open(&dir, &m) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(2);
            }
        };
        let start = Instant::now();
        let r = soundness::check(&t);
        println!(
            "{name}: {} positions, claims: exact {}, bare king {}, blockage {}, insufficient material {}; wrong {} ({:.1} s)",
            r.positions,
            r.exact,
            r.bare,
            r.blockage,
            r.dead,
            r.wrong,
            start.elapsed().as_secs_f64()
        );
        for e in &r.examples {
            println!("  {e}");
        }
        wrong += r.wrong;
    }
    if wrong > 0 {
        std::process::exit(1);
    }
}
