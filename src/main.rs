//! The `engine` command line: parses arguments and calls into the library. Subcommands for the
//! UCI loop, perft, bench and gentb are added beside `Tbinfo` by their modules' owners.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "engine", version, about = "Fortress chess engine")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Index sizes and broken entries of an endgame's two halves, and what its table files hold.
    Tbinfo {
        /// Endgame name, e.g. KQKR (either colouring).
        endgame: String,
        /// Directory of the table files.
        #[arg(long, default_value = "tables")]
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Tbinfo { endgame, dir, json }) => {
            fortress::egtb::info::run(&endgame, &dir, json)
        }
        None => ExitCode::SUCCESS,
    }
}
