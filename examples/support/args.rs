//! Command-line arguments shared by the help-center examples.

use braid::Principal;

/// Splits `[--principal tok1,tok2] words…` into the principal and the query words. The
/// operator's command line is a verified source of principal tokens; without the flag the
/// caller is anonymous (public records only).
pub fn principal_and_words() -> (Principal, Vec<String>) {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut tokens: Vec<String> = Vec::new();
    if let Some(at) = args.iter().position(|a| a == "--principal") {
        if at + 1 < args.len() {
            tokens = args[at + 1].split(',').map(str::to_string).collect();
            args.drain(at..=at + 1);
        }
    }
    (Principal::from_verified_tokens(&tokens), args)
}
