//! The `engine` binary: everything it does is in `fortress::cli`.

fn main() -> std::process::ExitCode {
    fortress::cli::main()
}
