//! The process-wide registry through which the VFS finds the storage of the database SQLite
//! opens: keyed by the database's full path exactly as SQLite computes it (the default VFS's
//! `xFullPathname`), so a lookup is a string comparison.

use super::store::Store;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

static REGISTRY: LazyLock<Mutex<HashMap<String, Arc<Store>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn registry() -> std::sync::MutexGuard<'static, HashMap<String, Arc<Store>>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes `store` the storage of the database at `key`.
pub fn register(key: &str, store: Arc<Store>) {
    registry().insert(key.to_string(), store);
}

/// Forgets the database at `key` if its storage is still `store`.
pub fn unregister(key: &str, store: &Arc<Store>) {
    let mut map = registry();
    if map.get(key).is_some_and(|s| Arc::ptr_eq(s, store)) {
        map.remove(key);
    }
}

/// The storage of the database at `key`.
pub fn find(key: &str) -> Option<Arc<Store>> {
    registry().get(key).cloned()
}
