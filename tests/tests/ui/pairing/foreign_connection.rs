use dbbench_core::__internals::postgres::PostgresConnection;
use dbbench_core::__internals::{embedded::EmbeddedBackend, EngineBackend, EngineDatabase};

// A database's methods take its own connection type (the backend traits link them): a
// PostgreSQL connection handed to an embedded database does not compile.
async fn close(db: &<EmbeddedBackend as EngineBackend>::Database, conn: &mut PostgresConnection) {
    let _ = db.close_window(conn).await;
}

fn main() {
    let _ = close;
}
