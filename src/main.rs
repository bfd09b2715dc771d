//! The `engine` binary: with no argument it speaks UCI on standard input and output; the
//! subcommands are tools (perft, bench, tables). Each arm only parses and calls the library.

use clap::{Parser, Subcommand};
use fortress::chess::perft::perft_divide;
use fortress::chess::Position;
use std::path::PathBuf;
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
    /// Search every position of bench.epd to a fixed depth; print nodes and speed.
    Bench {
        /// Search depth in plies.
        #[arg(default_value_t = fortress::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Probe the endgame tables of these directories (`;`-separated) during the bench.
        #[arg(long)]
        tables: Option<String>,
    },
    /// Table values of a position and its moves, and the move SZ°Z50Z picks.
    Probe {
        /// The position (default: FENs one per line on standard input).
        fen: Vec<String>,
        /// Table directories, separated by `;` (default: the engine's table directory).
        #[arg(long)]
        dir: Option<String>,
        /// One JSON object per position.
        #[arg(long)]
        json: bool,
    },
    /// Index sizes and broken entries of an endgame's two halves, and what its table files hold.
    Tbinfo {
        /// Endgame name, e.g. KQKR (either colouring).
        endgame: String,
        /// Directory of the table files.
        #[arg(long, default_value_os_t = fortress::egtb::probe::default_dir())]
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Build endgame tables (DTM, DTZ, DTZ50) with the sub-endgames they need, then verify them.
    Gentb {
        /// Endgames to build, e.g. KQKR KRPKR (either colouring).
        endgames: Vec<String>,
        /// Build every endgame with up to N men (kings included).
        #[arg(long)]
        men: Option<u8>,
        /// Directory of the table files.
        #[arg(long, default_value_os_t = fortress::egtb::probe::default_dir())]
        dir: PathBuf,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Rebuild the named endgames even if their tables are present and valid.
        #[arg(long)]
        force: bool,
        /// Only verify the named endgames' present tables.
        #[arg(long)]
        verify: bool,
        /// Do not verify the tables built (to verify them later with --verify).
        #[arg(long, conflicts_with = "verify")]
        no_verify: bool,
        /// Time the named endgames (default: the benchmark set) with 1 and 2 threads.
        #[arg(long)]
        bench: bool,
    },
    /// Fit the evaluation's weights to game results (Texel's method); prints a new weights.rs.
    Tune {
        /// `FEN | result` lines (result from White's side: 1, 0.5, 0), as datagen writes them.
        file: PathBuf,
        #[arg(long, default_value_t = 1000)]
        epochs: usize,
        /// Adam's step, in centipawns.
        #[arg(long, default_value_t = 1.0)]
        rate: f64,
        /// Pull towards the present weights (weight of their squared distance in the loss).
        #[arg(long, default_value_t = 3e-8)]
        prior: f64,
    },
    /// Self-play games at a fixed node count; prints `FEN | result` lines of quiet positions.
    Datagen {
        /// Opening FENs (EPD), one drawn at random per game (default: the start position).
        #[arg(long)]
        openings: Option<PathBuf>,
        #[arg(long, default_value_t = 1000)]
        games: usize,
        /// Nodes searched per move.
        #[arg(long, default_value_t = 5000)]
        nodes: u64,
        /// Random legal plies played after the opening.
        #[arg(long, default_value_t = 2)]
        random_plies: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => {
            let stdin = std::io::stdin();
            fortress::uci::session::run(stdin.lock(), Box::new(std::io::stdout()));
            ExitCode::SUCCESS
        }
        Some(Command::Tune {
            file,
            epochs,
            rate,
            prior,
        }) => run_tune(
            &file,
            &fortress::tune::texel::TuneArgs {
                epochs,
                rate,
                prior,
            },
        ),
        Some(Command::Datagen {
            openings,
            games,
            nodes,
            random_plies,
            seed,
        }) => run_datagen(
            openings,
            &fortress::tune::datagen::DatagenArgs {
                games,
                nodes,
                random_plies,
                seed,
            },
        ),
        Some(Command::Perft { depth, fen }) => run_perft(depth, &fen.join(" ")),
        Some(Command::Bench { depth, tables }) => run_bench(depth, tables.as_deref()),
        Some(Command::Probe { fen, dir, json }) => run_probe(&fen.join(" "), dir.as_deref(), json),
        Some(Command::Tbinfo { endgame, dir, json }) => {
            fortress::egtb::info::run(&endgame, &dir, json)
        }
        Some(Command::Gentb {
            endgames,
            men,
            dir,
            threads,
            force,
            verify,
            no_verify,
            bench,
        }) => {
            let args = fortress::egtb::generate::cli::GentbArgs {
                endgames,
                men,
                dir,
                threads,
                force,
                verify,
                no_verify,
                bench,
            };
            match fortress::egtb::generate::cli::run(&args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("gentb: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn run_tune(file: &std::path::Path, args: &fortress::tune::texel::TuneArgs) -> ExitCode {
    let result = std::fs::File::open(file)
        .map_err(|e| e.to_string())
        .and_then(|f| fortress::tune::texel::run(std::io::BufReader::new(f), args));
    match result {
        Ok(weights) => {
            print!("{}", weights);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tune: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_datagen(openings: Option<PathBuf>, args: &fortress::tune::datagen::DatagenArgs) -> ExitCode {
    use fortress::tune::datagen;
    let book = match openings.map(std::fs::File::open).transpose() {
        Ok(file) => file.map_or_else(Vec::new, |f| {
            datagen::read_openings(std::io::BufReader::new(f))
        }),
        Err(e) => {
            eprintln!("datagen: openings: {e}");
            return ExitCode::FAILURE;
        }
    };
    match datagen::run(&book, args, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("datagen: {e}");
            ExitCode::FAILURE
        }
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

fn run_probe(fen: &str, dir: Option<&str>, json: bool) -> ExitCode {
    use fortress::egtb::probe::{default_dir, split_path};
    use std::io::BufRead;
    let dirs = dir.map_or_else(|| vec![default_dir()], split_path);
    let reg = fortress::egtb::probe_cli::open_registry(dirs, &mut std::io::stderr());
    let mut out = std::io::stdout().lock();
    let mut all = true;
    if fen.trim().is_empty() {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if !line.trim().is_empty() {
                all &= fortress::egtb::probe_cli::answer(&reg, &line, json, &mut out);
            }
        }
    } else {
        all = fortress::egtb::probe_cli::answer(&reg, fen, json, &mut out);
    }
    if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn run_bench(depth: u32, tables: Option<&str>) -> ExitCode {
    let total = fortress::bench::positions().len();
    let tb = tables.map(|t| {
        let tb = fortress::egtb::Tablebases::new();
        tb.set_path(fortress::egtb::probe::split_path(t));
        eprintln!("tables: {} endgames", tb.snapshot().len());
        tb
    });
    let result = fortress::bench::run_with(depth, tb, &mut |i, fen, nodes| {
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
