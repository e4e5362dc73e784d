#include "state/Spares.hpp"

namespace ddl {

std::vector<std::string> assign_spares(std::vector<NodeState>& nodes, int wanted,
                                       const std::set<std::string>& fresh) {
    std::set<std::string> changed;
    int have = 0;
    for (const auto& n : nodes)
        if (n.spare && n.group != "master") ++have;
    for (auto& n : nodes)
        if (n.spare && n.group == "master") { // a master is never a spare (it holds the queue and shares)
            n.spare = false;
            changed.insert(n.name);
        }
    // Too few: fresh nodes first, then workers with ranks, then cordoned ones (a cordoned node made a spare
    // would come back from `ddl uncordon` as a spare, not with ranks); highest-numbered (last) first.
    for (const int pass : {0, 1, 2})
        for (auto it = nodes.rbegin(); it != nodes.rend() && have < wanted; ++it) {
            if (it->spare || it->group == "master") continue;
            if (pass == 0 && fresh.count(it->name) == 0) continue;
            if (pass == 1 && it->cordoned) continue;
            it->spare = true;
            ++have;
            changed.insert(it->name);
        }
    // Too many: ready spares first, the lowest-numbered first; then those out of service.
    for (const bool ready_only : {true, false})
        for (auto& n : nodes) {
            if (have <= wanted) break;
            if (!n.spare || n.group == "master" || (ready_only && n.cordoned)) continue;
            n.spare = false;
            --have;
            changed.insert(n.name);
        }
    std::vector<std::string> out;
    for (const auto& n : nodes)
        if (changed.count(n.name)) out.push_back(n.name);
    return out;
}

std::vector<std::string> ready_spares(const std::vector<NodeState>& nodes) {
    std::vector<std::string> out;
    for (const auto& n : nodes)
        if (n.ready_spare()) out.push_back(n.name);
    return out;
}

Status swap_in_spare(std::vector<NodeState>& nodes, const std::string& failed, const std::string& spare) {
    NodeState* f = nullptr;
    NodeState* s = nullptr;
    for (auto& n : nodes) {
        if (n.name == failed) f = &n;
        if (n.name == spare) s = &n;
    }
    if (!s || !s->ready_spare()) return Error{spare + " is no ready spare"};
    if (!f || !f->gets_ranks()) return Error{failed + " is no node with ranks"};
    if (f->group == "master")
        return Error{failed +
                     " is the master (it holds the job queue and the shared folder): a spare cannot "
                     "take its place; `ddl deploy --replace " +
                     failed + "` makes it anew"};
    s->spare = false;
    f->spare = true;
    f->cordoned = true;
    return {};
}

} // namespace ddl
