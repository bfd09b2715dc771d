//! The command line: with no argument the engine speaks UCI on standard input and output; the
//! subcommands are tools (perft, bench, tables, tuning). Each only parses its arguments and
//! calls the library.

mod datagen;
mod gentb;
mod paper;
mod probe;
mod tbinfo;
mod train;

use crate::chess::perft::perft_divide;
use crate::chess::Position;
use crate::egtb::play::syzygy::Syzygy;
use crate::eval::network::Network;
use crate::search::SyzygyUse;
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::sync::Arc;
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
    /// Search every position of bench.epd to a fixed depth; print nodes and speed.
    Bench {
        /// Search depth in plies.
        #[arg(default_value_t = crate::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Probe the endgame tables of these directories (`;`-separated) during the bench.
        #[arg(long)]
        dir: Option<String>,
        /// Probe the Syzygy tables of these directories (separated as the platform separates
        /// paths) during the bench, with the UCI options' defaults.
        #[arg(long)]
        syzygy: Option<String>,
        /// The network: `built-in` (as the UCI options default to) or a network file.
        #[arg(long, default_value = "built-in")]
        network: String,
    },
    /// Table values of a position and its moves, and the move SZ°Z50Z picks.
    Probe(probe::ProbeArgs),
    /// Index sizes and broken entries of an endgame's two halves, and what its table files hold;
    /// with --paper, the six-man tables against Bourzutschky, Tamplin, Haworth (2005).
    Tbinfo(tbinfo::TbinfoArgs),
    /// Build endgame tables (DTM, DTZ, DTZ50) with the sub-endgames they need, then verify them.
    Gentb(gentb::GentbArgs),
    /// Self-play games at a fixed node count, several at once, into a file of 32-byte training
    /// records (board, side to move, search score, game result); resumes a stopped run.
    Datagen(datagen::DatagenCli),
    /// Train the evaluation network on datagen's records (CPU, all cores); writes a network file.
    Train(train::TrainCli),
}

/// Parses the command line and runs what it names.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => {
            let stdin = std::io::stdin();
            crate::uci::session::run(stdin.lock(), Box::new(std::io::stdout()));
            ExitCode::SUCCESS
        }
        Some(Command::Datagen(args)) => datagen::run(&args),
        Some(Command::Train(args)) => train::run(&args),
        Some(Command::Perft { depth, fen }) => run_perft(depth, &fen.join(" ")),
        Some(Command::Bench {
            depth,
            dir,
            syzygy,
            network,
        }) => match network_arg(&network) {
            Ok(network) => run_bench(depth, dir.as_deref(), syzygy.as_deref(), network),
            Err(e) => {
                eprintln!("error: --network: {e}");
                ExitCode::FAILURE
            }
        },
        Some(Command::Probe(args)) => probe::run(&args),
        Some(Command::Tbinfo(args)) => tbinfo::run(&args),
        Some(Command::Gentb(args)) => match gentb::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gentb: {e}");
                ExitCode::FAILURE
            }
        },
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

/// The network `--network` names: `built-in` or a network file.
fn network_arg(arg: &str) -> Result<Arc<Network>, String> {
    match arg {
        "built-in" => Ok(Network::built_in()),
        path => Network::load(std::path::Path::new(path)).map(Arc::new),
    }
}

fn run_bench(
    depth: u32,
    dir: Option<&str>,
    syzygy: Option<&str>,
    network: Arc<Network>,
) -> ExitCode {
    let total = crate::bench::positions().len();
    let tb = dir.map(|t| {
        let tb = crate::egtb::Tablebases::new();
        tb.set_path(crate::egtb::play::probe::split_path(t));
        eprintln!("tables: {} endgames", tb.snapshot().len());
        tb
    });
    let syzygy = match syzygy.map(|s| Syzygy::open(&crate::egtb::play::syzygy::split_path(s))) {
        None => None,
        Some(Ok(tables)) => {
            tables.left_out().iter().for_each(|l| eprintln!("{l}"));
            eprintln!("{}", tables.describe());
            Some(SyzygyUse::defaults(tables))
        }
        Some(Err(e)) => {
            eprintln!("error: --syzygy: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = crate::bench::run_with(depth, tb, syzygy, network, &mut |i, fen, nodes| {
        eprintln!("Position: {}/{} ({}): {} nodes", i, total, fen, nodes);
    });
    eprintln!();
    eprintln!("===========================");
    println!("Total time (ms) : {}", result.millis);
    println!("Nodes searched  : {}", result.nodes);
    println!(
        "Nodes/second    : {}",
        result.nodes * 1000 / result.millis.max(1)
    );
    ExitCode::SUCCESS
}
