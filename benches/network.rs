//! What the network costs a node: the accumulator's update for a move, the evaluation from an
//! up-to-date accumulator, and a sum from scratch, over the positions of bench.epd and every
//! legal move from them.
//! `cargo bench --bench network [-- NET]` (default: the built-in network).

use fortress::chess::{legal_moves, Move, Position};
use fortress::eval::network::{Accumulator, Network};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let net = match std::env::args().nth(1).filter(|a| a != "--bench") {
        Some(path) => std::sync::Arc::new(Network::load(path.as_ref()).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })),
        None => Network::built_in(),
    };
    let mut cases: Vec<(Position, Move, Position)> = Vec::new();
    for pos in fortress::bench::positions() {
        for m in legal_moves(&pos).iter() {
            let mut after = pos.clone();
            after.make_move(m);
            cases.push((pos.clone(), m, after));
        }
    }
    let rounds = 200;
    let calls = (cases.len() * rounds) as f64;
    let ns = |t: Instant| t.elapsed().as_nanos() as f64 / calls;

    let mut parent = Accumulator::new(net.hidden());
    let mut child = Accumulator::new(net.hidden());
    let t = Instant::now();
    for _ in 0..rounds {
        for (pos, _, _) in &cases {
            net.refresh(black_box(pos), &mut parent);
        }
    }
    let refresh = ns(t);

    let t = Instant::now();
    for _ in 0..rounds {
        for (pos, m, _) in &cases {
            net.update(&parent, &mut child, black_box(pos), *m);
        }
    }
    let update = ns(t);

    let t = Instant::now();
    let mut sum = 0i64;
    for _ in 0..rounds {
        for (_, _, after) in &cases {
            sum += net.evaluate_accumulated(black_box(&child), after) as i64;
        }
    }
    let evaluate = ns(t);

    black_box(sum);

    println!(
        "network: hidden {}, {} positions x {rounds}",
        net.hidden(),
        cases.len()
    );
    println!("update for a move        {update:8.1} ns");
    println!("evaluate (accumulated)   {evaluate:8.1} ns");
    println!("update + evaluate        {:8.1} ns", update + evaluate);
    println!("refresh (from scratch)   {refresh:8.1} ns");
}
