// See oom_ledger.h.
#include "watch/oom_ledger.h"

#include <algorithm>
#include <cstdint>

namespace aimem::watch {

namespace {

// t + d without overflow: the watch flushes its last steps at INT64_MAX
// ("nothing will explain them now"), and a credit from then lasts to the end.
int64_t later(int64_t t, int64_t d) { return t > INT64_MAX - d ? INT64_MAX : t + d; }

}  // namespace


std::vector<std::string> cgroup_and_ancestors(std::string_view cgroup) {
  std::vector<std::string> out;
  while (!cgroup.empty() && cgroup.back() == '/') cgroup.remove_suffix(1);
  while (!cgroup.empty()) {
    out.emplace_back(cgroup);
    size_t slash = cgroup.rfind('/');
    if (slash == std::string_view::npos) break;
    cgroup = cgroup.substr(0, slash);
  }
  return out;
}

namespace {

size_t depth(const std::string& cgroup) { return static_cast<size_t>(std::count(cgroup.begin(), cgroup.end(), '/')); }

}  // namespace

void OomLedger::expire(int64_t now_us) {
  for (auto it = credits_.begin(); it != credits_.end();)
    it = it->second.until_us < now_us ? credits_.erase(it) : std::next(it);
}

uint64_t OomLedger::take(std::map<std::string, Credit>& credits, const std::string& cgroup, uint64_t want, bool kills,
                         int64_t now_us) {
  auto it = credits.find(cgroup);
  if (it == credits.end() || it->second.until_us < now_us) return want;
  uint64_t& have = kills ? it->second.kills : it->second.ooms;
  uint64_t used = std::min(have, want);
  have -= used;
  if (it->second.kills == 0 && it->second.ooms == 0) credits.erase(it);
  return want - used;
}

void OomLedger::kernel_report(std::string_view oom_memcg, std::string_view task_memcg, int64_t now_us) {
  expire(now_us);
  // One kill of the victim's cgroup and its ancestors; one OOM of the
  // limited cgroup and its ancestors. A step already waiting is explained
  // now; else the credit waits for the step.
  auto explain = [&](std::string_view cgroup, bool kill) {
    for (const std::string& c : cgroup_and_ancestors(cgroup)) {
      auto p = pending_.find(c);
      uint64_t* waiting = p == pending_.end() ? nullptr : kill ? &p->second.kill_delta : &p->second.oom_delta;
      if (waiting && *waiting > 0) {
        --*waiting;
        if (p->second.kill_delta == 0 && p->second.oom_delta == 0) pending_.erase(p);
        continue;
      }
      Credit& credit = credits_[c];
      ++(kill ? credit.kills : credit.ooms);
      credit.until_us = later(now_us, match_us_);
    }
  };
  explain(task_memcg, true);
  explain(oom_memcg, false);
}

bool OomLedger::counters(const std::string& cgroup, uint64_t oom, uint64_t kills, int64_t now_us) {
  expire(now_us);
  auto it = last_.find(cgroup);
  if (it == last_.end() || oom < it->second.first || kills < it->second.second) {
    last_[cgroup] = {oom, kills};
    return false;
  }
  uint64_t doom = oom - it->second.first, dkill = kills - it->second.second;
  it->second = {oom, kills};
  if (doom == 0 && dkill == 0) return false;
  dkill = take(credits_, cgroup, dkill, true, now_us);
  doom = take(credits_, cgroup, doom, false, now_us);
  if (dkill > 0 || doom > 0) {
    auto [p, fresh] = pending_.try_emplace(cgroup);
    if (fresh) {
      p->second.cgroup = cgroup;
      p->second.seen_us = now_us;
    }
    p->second.kill_delta += dkill;
    p->second.oom_delta += doom;
    p->second.oom = oom;
    p->second.kills = kills;
  }
  return true;
}

std::vector<OomSignal> OomLedger::due(int64_t now_us) {
  expire(now_us);
  std::vector<std::string> ready;
  for (const auto& [cgroup, s] : pending_)
    if (s.seen_us + grace_us_ <= now_us) ready.push_back(cgroup);
  std::stable_sort(ready.begin(), ready.end(), [](const std::string& a, const std::string& b) { return depth(a) > depth(b); });
  std::vector<OomSignal> out;
  for (const std::string& cgroup : ready) {
    auto p = pending_.find(cgroup);
    if (p == pending_.end()) continue;  // folded into a deeper cgroup's
    OomSignal s = std::move(p->second);
    pending_.erase(p);
    // The same kills as counted in the ancestors (v2): each kill here came
    // from one OOM here or above, so it explains a kill and an OOM of each.
    const uint64_t kills = s.kill_delta, ooms = std::max(s.kill_delta, s.oom_delta);
    auto ancestors = cgroup_and_ancestors(cgroup);
    for (size_t i = 1; i < ancestors.size(); ++i) {
      const std::string& a = ancestors[i];
      uint64_t k = kills, o = ooms;
      if (auto q = pending_.find(a); q != pending_.end()) {
        uint64_t dk = std::min(k, q->second.kill_delta), dok = std::min(o, q->second.oom_delta);
        q->second.kill_delta -= dk, q->second.oom_delta -= dok;
        k -= dk, o -= dok;
        if (q->second.kill_delta == 0 && q->second.oom_delta == 0) pending_.erase(q);
      }
      if (k > 0 || o > 0) {
        Credit& credit = credits_[a];
        credit.kills += k, credit.ooms += o;
        credit.until_us = later(now_us, match_us_);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<int64_t> OomLedger::next_due() const {
  std::optional<int64_t> at;
  for (const auto& [cgroup, s] : pending_)
    if (!at || s.seen_us + grace_us_ < *at) at = s.seen_us + grace_us_;
  return at;
}

void OomLedger::keep_only(const std::set<std::string>& present) {
  for (auto it = last_.begin(); it != last_.end();) it = present.count(it->first) ? std::next(it) : last_.erase(it);
}

}  // namespace aimem::watch
