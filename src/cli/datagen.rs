//! `engine datagen`: its arguments, progress bar and summary.

use crate::tune::datagen::{progress_path, read_openings, DatagenArgs, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct DatagenCli {
    /// The record file (32 bytes a position); a stopped run on it resumes.
    #[arg(long)]
    out: PathBuf,
    /// Games the file holds at the end (a resumed run plays the rest).
    #[arg(long, default_value_t = 1000)]
    games: u64,
    /// Nodes searched per move.
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Random legal plies played after the opening.
    #[arg(long, default_value_t = 2)]
    random_plies: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games played at once, one per thread (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Opening FENs (EPD), one drawn at random per game (default: the start position).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Directories of endgame tables (`;`-separated) that end a game with their verdict
    /// (default: the engine's table directory, if it exists).
    #[arg(long)]
    tables: Option<String>,
    /// The network that evaluates: `built-in` or a network file.
    #[arg(long, default_value = "built-in")]
    network: String,
}

pub fn run(cli: &DatagenCli) -> ExitCode {
    let fail = |e: String| {
        eprintln!("datagen: {e}");
        ExitCode::FAILURE
    };
    let book = match &cli.openings {
        None => Vec::new(),
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => {
                let book = read_openings(std::io::BufReader::new(f));
                if book.is_empty() {
                    return fail(format!("{}: no FEN in it", path.display()));
                }
                book
            }
            Err(e) => return fail(format!("{}: {e}", path.display())),
        },
    };
    let dirs = match &cli.tables {
        Some(t) => {
            let dirs = crate::egtb::play::probe::split_path(t);
            if let Some(bad) = dirs.iter().find(|d| !d.is_dir()) {
                return fail(format!("--tables: {} is not a directory", bad.display()));
            }
            dirs
        }
        None => vec![crate::egtb::play::probe::default_dir()],
    };
    let tables = crate::egtb::Tablebases::new();
    tables.set_path(dirs);
    let endgames = tables.snapshot().len();
    let threads = cli.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 {
        return fail("--threads must be at least 1".into());
    }
    let network = match super::network_arg(&cli.network) {
        Ok(n) => n,
        Err(e) => return fail(format!("--network: {e}")),
    };
    let args = DatagenArgs {
        network,
        out: cli.out.clone(),
        games: cli.games,
        nodes: cli.nodes,
        random_plies: cli.random_plies,
        seed: cli.seed,
        threads,
    };
    eprintln!(
        "datagen: {} games into {}, {} nodes a move, {threads} at once, {} openings, {endgames} table endgames (both colourings)",
        cli.games,
        cli.out.display(),
        cli.nodes,
        if book.is_empty() {
            "the start position as the".to_string()
        } else {
            book.len().to_string()
        },
    );
    let drawn = std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        Some(cli.games),
        if drawn {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "games [{bar:30}] {pos}/{len}, {msg}, {elapsed} so far, about {eta} left",
        )
        .expect("valid template"),
    );
    let start = Instant::now();
    let mut first = None;
    let step = (cli.games / 20).max(1);
    let mut on_game = |p: &Progress| {
        let first = *first.get_or_insert(p.games - 1);
        bar.set_position(p.games);
        let rate = (p.games - first) as f64 / start.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!("{} positions, {rate:.1} games/s", p.positions));
        if !drawn && p.games.is_multiple_of(step) {
            eprintln!(
                "datagen: {} of {} games, {} positions, {:.0} s",
                p.games,
                cli.games,
                p.positions,
                start.elapsed().as_secs_f64()
            );
        }
    };
    let outcome = crate::tune::datagen::run(&book, Some(tables), &args, &mut on_game);
    bar.finish_and_clear();
    match outcome {
        Ok((done, played)) => {
            let secs = start.elapsed().as_secs_f64();
            let [losses, draws, wins] = done.results;
            println!(
                "{}: {} games (White wins {wins}, draws {draws}, losses {losses}; {} ended by the tables), {} positions ({:.1} a game), {} bytes",
                cli.out.display(),
                done.games,
                done.table_games,
                done.positions,
                done.positions as f64 / done.games.max(1) as f64,
                done.positions * crate::tune::record::RECORD_BYTES as u64,
            );
            println!(
                "this run: {played} games in {secs:.1} s, {:.2} games/s; progress in {}",
                played as f64 / secs.max(1e-3),
                progress_path(&cli.out).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(e.to_string()),
    }
}
