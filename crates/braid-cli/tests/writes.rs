//! Writes over `braid serve`: `POST /v1/records`, `DELETE /v1/records/{id}`,
//! `POST /v1/records/delete` — read your writes, and a writer confined to its tenant's
//! namespace whose answers do not depend on other tenants' records.

use serde_json::{json, Value};

use crate::support::{new_token, Reply, Server};

/// A server whose configuration adds a writer for acme and one for globex; returns their
/// tokens beside it.
fn start() -> (Server, String, String) {
    let acme = new_token(&["--name", "acme-writer", "--tenant", "acme", "--write"]);
    let globex = new_token(&["--name", "globex-writer", "--tenant", "globex", "--write"]);
    assert!(acme.entry.contains("write = true"), "{}", acme.entry);
    let extra = format!("{}\n{}\n", acme.entry, globex.entry);
    (Server::start_with(5000, "", &extra), acme.token, globex.token)
}

fn send(server: &Server, token: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
    let auth = format!("Bearer {token}");
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    server.request(method, path, &headers, body.map(|b| b.to_string()).as_deref())
}

fn upsert(server: &Server, token: &str, records: Value) -> Reply {
    send(server, token, "POST", "/v1/records", Some(json!({ "records": records })))
}

fn hit_ids(server: &Server, token: &str, query: &str) -> Vec<String> {
    let reply = server.search(token, json!({"query": query, "mode": "lexical"}));
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_write_is_read_back_by_its_tenant_only() {
    let (server, acme_writer, _) = start();
    let reply = upsert(
        &server,
        &acme_writer,
        json!([{"_id": "note-1", "title": "Parking", "text": "The van is parked on level three, by the lift."}]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    let written = reply.json();
    assert_eq!(written["ids"], json!(["tenant:acme/note-1"]));
    assert!(written["commit"].is_string(), "{written}");
    // Read your writes: the answer came after the commit the server now serves.
    assert_eq!(hit_ids(&server, &server.acme, "van parked lift"), ["tenant:acme/note-1"]);
    assert!(hit_ids(&server, &server.globex, "van parked lift").is_empty());
    // The same write again is idempotent; a delete twice too, and neither says what existed.
    assert_eq!(upsert(&server, &acme_writer, json!([{"_id": "note-1", "text": "moved to level four"}])).status, 200);
    assert!(hit_ids(&server, &server.acme, "van parked lift").is_empty());
    // A write that changes nothing makes no commit and names none (the one served would say
    // when other tenants last wrote); nor does a delete by a filter that matches nothing.
    let unchanged = upsert(&server, &acme_writer, json!([{"_id": "note-1", "text": "moved to level four"}]));
    assert_eq!((unchanged.status, unchanged.json()["commit"].clone()), (200, Value::Null), "{}", unchanged.text);
    let nothing = json!({"filter": {"range": {"field": "created", "min": 5, "max": 1}}});
    let matched = send(&server, &acme_writer, "POST", "/v1/records/delete", Some(nothing));
    assert_eq!((matched.status, matched.json()["commit"].clone()), (200, Value::Null), "{}", matched.text);
    // A full id of the writer's own namespace needs no tenant of its own.
    let full = upsert(&server, &acme_writer, json!([{"_id": "tenant:acme/note-2", "text": "tyre pressure"}]));
    assert_eq!(full.status, 200, "{}", full.text);
    assert_eq!(hit_ids(&server, &server.acme, "level four"), ["tenant:acme/note-1"]);
    let first = send(&server, &acme_writer, "DELETE", "/v1/records/note-1", None);
    let again = send(&server, &acme_writer, "DELETE", "/v1/records/tenant%3Aacme%2Fnote-1", None);
    assert_eq!((first.status, again.status), (200, 200), "{} {}", first.text, again.text);
    assert_eq!(first.json()["ids"], again.json()["ids"]);
    assert!(hit_ids(&server, &server.acme, "level four").is_empty());
    let many = send(&server, &acme_writer, "POST", "/v1/records/delete", Some(json!({"ids": ["a", "b"]})));
    assert_eq!(many.json()["ids"], json!(["tenant:acme/a", "tenant:acme/b"]), "{}", many.text);
    server.stop();
}

#[test]
fn who_may_write_what() {
    let (server, acme_writer, _) = start();
    // Reading tokens may not write; the body is not even read.
    let reply = upsert(&server, &server.acme, json!([{"_id": "x", "text": "x"}]));
    assert_eq!(reply.status, 403, "{}", reply.text);
    assert_eq!(reply.json()["error"]["code"], "forbidden");
    // A writer grants only tokens it holds, in its own tenant, never a reserved token.
    for record in [
        json!({"_id": "x", "text": "x", "acl": ["group:support"]}),
        json!({"_id": "x", "text": "x", "tenant": "globex"}),
        json!({"_id": "x", "text": "x", "acl": ["__braid:no-acl"]}),
        json!({"text": "no id"}),
        // Its own owner token: a record only its owner sees, that its tenant could replace.
        json!({"_id": "x", "text": "x", "acl": ["owner:token:acme-writer"]}),
        // A vector, on an index without vectors: it would set them up for every tenant.
        json!({"_id": "x", "text": "x", "vector": [0.1, 0.2, 0.3]}),
    ] {
        let reply = upsert(&server, &acme_writer, json!([record]));
        assert_eq!(reply.status, 400, "{record}: {}", reply.text);
    }
    // Batches are bounded and a bad record fails the whole batch: nothing is committed.
    let reply = upsert(&server, &acme_writer, json!([{"_id": "ok", "text": "quartzite"}, {"_id": "bad", "text": 5}]));
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert!(hit_ids(&server, &server.acme, "quartzite").is_empty());
    assert_eq!(upsert(&server, &acme_writer, json!([])).status, 400);
    server.stop();
}

#[test]
fn another_tenants_ids_answer_alike_whether_they_exist_or_not() {
    let (server, acme_writer, globex_writer) = start();
    let reply = upsert(&server, &acme_writer, json!([{"_id": "plan", "text": "the merger codename is bluefinch"}]));
    assert_eq!(reply.status, 200, "{}", reply.text);
    // globex names acme's record and an id acme never wrote: the same refusal, by the id's
    // shape alone (the message differs only in the id it quotes).
    let answer = |method: &str, path: &str, body: Option<Value>, id: &str| {
        let reply = send(&server, &globex_writer, method, path, body);
        (reply.status, reply.text.replace(id, "ID"))
    };
    let (existing, missing) = ("tenant:acme/plan", "tenant:acme/nothing");
    let upsert_of = |id: &str| answer("POST", "/v1/records", Some(json!({"records": [{"_id": id, "text": "x"}]})), id);
    assert_eq!(upsert_of(existing), upsert_of(missing));
    assert_eq!(upsert_of(existing).0, 400);
    let delete_of = |id: &str| answer("POST", "/v1/records/delete", Some(json!({"ids": [id]})), id);
    assert_eq!(delete_of(existing), delete_of(missing));
    assert_eq!(delete_of(existing).0, 400);
    let path_of = |id: &str| {
        let path = format!("/v1/records/{}", id.replace(':', "%3A").replace('/', "%2F"));
        answer("DELETE", &path, None, id)
    };
    assert_eq!(path_of(existing), path_of(missing));
    assert_eq!(path_of(existing).0, 400);
    // acme's record is untouched.
    assert_eq!(hit_ids(&server, &server.acme, "bluefinch"), ["tenant:acme/plan"]);
    server.stop();
}

/// `POST /v1/records/delete` with a filter deletes the writer's own records the filter admits,
/// and no other tenant's, whatever they hold.
#[test]
fn a_filter_deletes_the_writers_own_matching_records() {
    let (server, acme_writer, globex_writer) = start();
    let note = |id: &str, category: &str| json!({"_id": id, "title": "Zebra note", "text": "zebra crossing notes", "metadata": {"category": category}});
    assert_eq!(
        upsert(&server, &acme_writer, json!([note("z1", "old"), note("z2", "old"), note("z3", "new")])).status,
        200
    );
    assert_eq!(upsert(&server, &globex_writer, json!([note("z1", "old")])).status, 200);
    let filter = json!({"filter": {"keyword": {"field": "category", "value": "old"}}});
    let reply = send(&server, &acme_writer, "POST", "/v1/records/delete", Some(filter.clone()));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["ids"], json!(["tenant:acme/z1", "tenant:acme/z2"]));
    assert_eq!(hit_ids(&server, &server.acme, "zebra crossing"), ["tenant:acme/z3"]);
    assert_eq!(hit_ids(&server, &server.globex, "zebra crossing"), ["tenant:globex/z1"]);
    // Nothing left to match: an empty answer, still 200.
    let again = send(&server, &acme_writer, "POST", "/v1/records/delete", Some(filter));
    assert_eq!((again.status, again.json()["ids"].clone()), (200, json!([])), "{}", again.text);
    // Ids and a filter together, or neither: 400.
    for body in [json!({}), json!({"ids": ["z3"], "filter": {"keyword": {"field": "category", "value": "new"}}})] {
        assert_eq!(send(&server, &acme_writer, "POST", "/v1/records/delete", Some(body)).status, 400);
    }
}
