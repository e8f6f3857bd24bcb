//! The configuration pin: a data directory remembers a digest of the configuration its
//! journal was written under, since replaying the journal under another one (other
//! instruments, fees or opening holders) would build another state.
//!
//! The digest is taken over a canonical encoding (the configuration's serde form in
//! postcard: fields in declaration order, maps in key order), never over `Debug` text, and
//! the file says which pin format wrote it: `pin-v2 <16 hex digits>`. A directory pinned by
//! the first format (a bare digest of the `Debug` text) is still opened when that text
//! matches, and its pin is rewritten in the current format.

use std::path::Path;

use serde::Serialize;

use super::{StoreError, io_error};
use matchbook_core::StateHasher;

/// File holding the pin.
pub const CONFIG_PIN: &str = "config.pin";

/// Format of the pin this build writes.
pub const PIN_FORMAT: u32 = 2;

fn digest(bytes: &[u8]) -> String {
    let mut hasher = StateHasher::default();
    hasher.bytes(bytes);
    format!("{:016x}", hasher.finish())
}

/// The pin of `config`: its canonical encoding's digest, with the pin format.
pub fn pin_of<T: Serialize + ?Sized>(config: &T) -> Result<String, StoreError> {
    let bytes = postcard::to_stdvec(config).map_err(|e| StoreError::Io {
        path: CONFIG_PIN.into(),
        source: std::io::Error::other(format!("configuration not encodable: {e}")),
    })?;
    Ok(format!("pin-v{PIN_FORMAT} {}", digest(&bytes)))
}

/// Records the pin of `config` in a new directory, or checks it against the one recorded.
/// `legacy` is the `Debug` text the first pin format hashed: a directory pinned by it opens
/// when it matches, and is re-pinned in the current format.
pub fn pin_config<T: Serialize + ?Sized>(
    dir: &Path,
    config: &T,
    legacy: &str,
) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let pin = pin_of(config)?;
    let path = dir.join(CONFIG_PIN);
    let pinned = match std::fs::read_to_string(&path) {
        Ok(pinned) => pinned,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return write_pin(dir, &pin),
        Err(e) => return Err(StoreError::Io { path, source: e }),
    };
    let pinned = pinned.trim();
    match compare(dir, pinned, &pin) {
        Err(StoreError::ConfigChanged(_)) if pinned == digest(legacy.as_bytes()) => {
            write_pin(dir, &pin)
        }
        other => other,
    }
}

/// Checks, writing nothing, that `dir` holds a pin and that it is `config`'s (a pin of the
/// first format is refused: the engine that owns the directory rewrites it when it starts).
pub fn check_pin<T: Serialize + ?Sized>(dir: &Path, config: &T) -> Result<(), StoreError> {
    let path = dir.join(CONFIG_PIN);
    let pinned = match std::fs::read_to_string(&path) {
        Ok(pinned) => pinned,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::NotADataDirectory(dir.to_owned()));
        }
        Err(e) => return Err(StoreError::Io { path, source: e }),
    };
    compare(dir, pinned.trim(), &pin_of(config)?)
}

/// Whether the `pinned` text of `dir` is `pin`: the same, another configuration, or a pin
/// format this build does not write.
fn compare(dir: &Path, pinned: &str, pin: &str) -> Result<(), StoreError> {
    if pinned == pin {
        return Ok(());
    }
    match pinned.strip_prefix("pin-v") {
        Some(rest) => {
            let format = rest.split(' ').next().unwrap_or_default();
            if format == PIN_FORMAT.to_string() {
                Err(StoreError::ConfigChanged(dir.to_owned()))
            } else {
                Err(StoreError::PinFormat {
                    dir: dir.to_owned(),
                    found: format!("pin-v{format}"),
                })
            }
        }
        None => Err(StoreError::ConfigChanged(dir.to_owned())),
    }
}

/// Writes the pin atomically (the directory synced too, so the rename survives a power
/// loss).
fn write_pin(dir: &Path, pin: &str) -> Result<(), StoreError> {
    let path = dir.join(CONFIG_PIN);
    crate::files::write_file_atomically(&path, pin.as_bytes()).map_err(io_error(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mb-pin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn demo() -> matchbook_core::EngineConfig {
        matchbook_config::demo::config()
    }

    /// The canonical encoding of the demo configuration, pinned: a change to any type the
    /// pin encodes shows here first, and must be deliberate (existing directories would no
    /// longer open).
    #[test]
    fn the_demo_configuration_has_the_committed_pin() {
        assert_eq!(pin_of(&demo()).expect("pin"), "pin-v2 c79b2ae633bf53d8");
    }

    #[test]
    fn a_directory_opens_under_its_configuration_only() {
        let dir = scratch("same");
        pin_config(&dir, &demo(), "unused").expect("first use");
        pin_config(&dir, &demo(), "unused").expect("same configuration");
        let mut other = demo();
        other.max_open_orders += 1;
        assert!(matches!(
            pin_config(&dir, &other, "unused"),
            Err(StoreError::ConfigChanged(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_first_format_pin_opens_when_its_text_matches_and_is_rewritten() {
        let dir = scratch("legacy");
        std::fs::create_dir_all(&dir).expect("dir");
        let legacy = format!("{:?}", demo());
        std::fs::write(dir.join(CONFIG_PIN), digest(legacy.as_bytes())).expect("old pin");
        assert!(matches!(
            pin_config(&dir, &demo(), "another text"),
            Err(StoreError::ConfigChanged(_))
        ));
        pin_config(&dir, &demo(), &legacy).expect("the old pin matches");
        let rewritten = std::fs::read_to_string(dir.join(CONFIG_PIN)).expect("pin");
        assert_eq!(rewritten, pin_of(&demo()).expect("pin"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_later_pin_format_is_refused_naming_both() {
        let dir = scratch("later");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join(CONFIG_PIN), "pin-v3 0123456789abcdef").expect("pin");
        let refused = pin_config(&dir, &demo(), "unused").expect_err("refused");
        let message = refused.to_string();
        assert!(
            message.contains("pin-v3") && message.contains("pin-v2"),
            "{message}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
