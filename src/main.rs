//! The `engine` binary: with no argument it speaks UCI on standard input and output; the
//! subcommands are tools (perft, bench, tables).

use clap::{Parser, Subcommand};
use fortress::chess::perft::perft_divide;
use fortress::chess::Position;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "engine",
    version,
    about = "Fortress: a UCI chess engine with its own endgame tables"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaf nodes of the legal move tree, per root move.
    Perft {
        depth: u32,
        /// The position (default: the start position).
        fen: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => ExitCode::SUCCESS,
        Some(Command::Perft { depth, fen }) => run_perft(depth, &fen.join(" ")),
    }
}

fn run_perft(depth: u32, fen: &str) -> ExitCode {
    let mut pos = if fen.trim().is_empty() {
        Position::startpos()
    } else {
        match Position::from_fen(fen) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {}", e);
                return ExitCode::FAILURE;
            }
        }
    };
    let start = Instant::now();
    let mut total = 0;
    for (m, n) in perft_divide(&mut pos, depth) {
        println!("{}: {}", m, n);
        total += n;
    }
    let secs = start.elapsed().as_secs_f64();
    println!();
    println!("Nodes searched: {}", total);
    println!("Time (ms)     : {}", (secs * 1000.0) as u64);
    println!("Nodes/second  : {}", (total as f64 / secs.max(1e-9)) as u64);
    ExitCode::SUCCESS
}
