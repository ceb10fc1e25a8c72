//! Installing a scenario's workload: each workload's applications on its
//! hosts, their sockets opened and connected in a fixed order (so ports
//! and seeds do not depend on anything but the scenario).

use smoltcp::iface::SocketHandle;
use smoltcp::wire::IpEndpoint;

use super::*;

/// A DSM node's page transfers when the scenario gives neither `pages` nor `duration`.
const DEFAULT_PAGES: u64 = 1000;

fn host_index(hosts: &[Host], name: &str) -> usize {
    hosts.iter().position(|h| h.name == name).expect("validated scenario names hosts")
}

fn open(hosts: &mut [Host], client: usize, server: usize, port: u16) -> (SocketHandle, SocketHandle) {
    open_from(hosts, client, server, port, EPHEMERAL_PORT)
}

/// A listening socket on `server`'s `port` and a socket on `client`
/// connecting to it from `local_port`.
fn open_from(
    hosts: &mut [Host],
    client: usize,
    server: usize,
    port: u16,
    local_port: u16,
) -> (SocketHandle, SocketHandle) {
    let listen = hosts[server].add_tcp_socket();
    hosts[server].sockets.get_mut::<tcp::Socket>(listen).listen(port).expect("fresh socket listens");
    let remote = (IpAddress::Ipv4(hosts[server].ip), port);
    let h = &mut hosts[client];
    let active = h.add_tcp_socket();
    let sock = h.sockets.get_mut::<tcp::Socket>(active);
    sock.connect(h.iface.context(), remote, local_port).expect("fresh socket connects");
    (active, listen)
}

/// Bound UDP sockets on `client` (an ephemeral port) and `server` (`port`),
/// and the server's endpoint.
fn open_udp(hosts: &mut [Host], client: usize, server: usize, port: u16) -> (SocketHandle, SocketHandle, IpEndpoint) {
    let b = hosts[server].add_udp_socket();
    hosts[server].sockets.get_mut::<udp_socket::Socket>(b).bind(port).expect("fresh socket binds");
    let a = hosts[client].add_udp_socket();
    hosts[client].sockets.get_mut::<udp_socket::Socket>(a).bind(EPHEMERAL_PORT).expect("fresh socket binds");
    (a, b, IpEndpoint::new(IpAddress::Ipv4(hosts[server].ip), port))
}

/// How one request/response connection runs: its sizes, how many
/// transactions (or until when), the client's pause between them, and the
/// pattern streams of its requests and responses.
struct RrSpec {
    request: u64,
    response: u64,
    transactions: u64,
    until: Option<Time>,
    think: crate::engine::Dur,
    streams: (u64, u64),
}

/// The client and the server of one request/response connection
/// (`client`: the client's host, named in the server's stream report when
/// the server is one of several).
fn rr_pair(
    seed: u64,
    (active, listen): (SocketHandle, SocketHandle),
    spec: &RrSpec,
    client: Option<usize>,
) -> (App, App) {
    let (req, resp) = spec.streams;
    let c = App::RrClient(RrClient {
        sock: active,
        out: Pattern::new(seed, req),
        check: Checker::new(seed, resp),
        request: spec.request,
        response: spec.response,
        transactions: spec.transactions,
        sent: 0,
        completed: 0,
        started_tx: None,
        first: None,
        last: None,
        latencies: Vec::with_capacity(if spec.until.is_some() { 0 } else { spec.transactions.min(1 << 20) as usize }),
        closed: false,
        think: spec.think,
        not_before: None,
        until: spec.until,
        measured: None,
    });
    let s = App::RrServer(RrServer {
        sock: listen,
        out: Pattern::new(seed, resp),
        check: Checker::new(seed, req),
        request: spec.request,
        response: spec.response,
        sent: 0,
        closed: false,
        client,
    });
    (c, s)
}

/// A request/response client and its server on one TCP connection.
pub(super) fn install_rr(r: &RrConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let RrConfig { client, server, request, response, transactions, port } = r;
    let (c, s) = (host_index(hosts, client), host_index(hosts, server));
    let spec = RrSpec {
        request: request.0,
        response: response.0,
        transactions: *transactions,
        until: None,
        think: crate::engine::Dur::ZERO,
        streams: (0, 1),
    };
    (apps[c], apps[s]) = rr_pair(seed, open(hosts, c, s, *port), &spec, None);
}

/// A UDP stream's sender and receiver.
pub(super) fn install_udp_stream(u: &crate::config::UdpStreamConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (tx, rx) = (host_index(hosts, &u.from), host_index(hosts, &u.to));
    let (a, b, peer) = open_udp(hosts, tx, rx, u.port);
    let opts = udp::StreamOptions {
        size: u.size.0,
        count: u.count,
        duration: u.duration.map(|d| d.dur()),
        rate: u.rate,
        poisson: u.arrivals == crate::config::Arrivals::Poisson,
        bursts: u.on.zip(u.off).map(|(on, off)| (on.dur(), off.dur())),
        linger: u.linger.dur(),
        replay: None,
    };
    let (sender, receiver) = udp::stream_pair(a, b, peer, seed, opts);
    apps[tx] = App::UdpTx(Box::new(sender));
    apps[rx] = App::UdpRx(receiver);
}

/// A captured stream replayed over UDP (the capture is loaded).
pub(super) fn install_replay(p: &crate::config::PcapReplayConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (tx, rx) = (host_index(hosts, &p.from), host_index(hosts, &p.to));
    let (a, b, peer) = open_udp(hosts, tx, rx, p.port);
    let opts = udp::StreamOptions {
        size: replay::MIN_PAYLOAD,
        count: None,
        duration: None,
        rate: None,
        poisson: false,
        bursts: None,
        linger: p.linger.dur(),
        replay: Some(p.schedule.clone().expect("the replay file is loaded before the run")),
    };
    let (sender, receiver) = udp::stream_pair(a, b, peer, seed, opts);
    apps[tx] = App::UdpTx(Box::new(sender));
    apps[rx] = App::UdpRx(receiver);
}

/// A UDP request/response client and server.
pub(super) fn install_udp_rr(u: &RrConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (c, s) = (host_index(hosts, &u.client), host_index(hosts, &u.server));
    let (a, b, peer) = open_udp(hosts, c, s, u.port);
    let (client, server) = udp::rr_pair(a, b, peer, seed, u.request.0, u.response.0, u.transactions);
    apps[c] = App::UdpRr(client);
    apps[s] = App::UdpRr(server);
}

/// The echo workload's client (UDP or VIA); the echo node needs no application.
pub(super) fn install_echo(e: &crate::config::EchoConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (c, s) = (host_index(hosts, &e.client), host_index(hosts, &e.server));
    let io = match e.protocol {
        crate::config::MessageProtocol::Udp => {
            let (a, _, peer) = open_udp(hosts, c, s, e.port);
            via::Io::Udp(a, peer)
        }
        crate::config::MessageProtocol::Via => {
            let vi = via::Vi::new(1, hosts[c].mac, hosts[s].mac, hosts[c].ip_mtu(), e.size.0);
            via::Io::Via(Box::new(vi))
        }
    };
    let total = e.warmup + e.messages;
    apps[c] = App::Echo(Box::new(via::EchoClient::new(io, seed, e.size.0, total, e.warmup)));
}

/// A TCP connect/request/response client and its listening server.
pub(super) fn install_crr(r: &RrConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (c, s) = (host_index(hosts, &r.client), host_index(hosts, &r.server));
    let listen = hosts[s].add_tcp_socket();
    hosts[s].sockets.get_mut::<tcp::Socket>(listen).listen(r.port).expect("fresh socket listens");
    let at = IpEndpoint::new(IpAddress::Ipv4(hosts[s].ip), r.port);
    let (client, server) = crr::pair(listen, at, seed, r.request.0, r.response.0, r.transactions);
    apps[c] = App::CrrClient(client);
    apps[s] = App::CrrServer(server);
}

/// NetPIPE's client and server (TCP or UDP).
pub(super) fn install_netpipe(n: &NetpipeConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let (c, s) = (host_index(hosts, &n.client), host_index(hosts, &n.server));
    let (client_io, server_io, caps) = match n.transport {
        crate::config::Transport::Tcp => {
            let (active, listen) = open(hosts, c, s, n.port);
            // NPtcp sets TCP_NODELAY on both ends.
            hosts[c].set_nodelay(active);
            hosts[s].set_nodelay(listen);
            let cap = |h: &Host, sock| h.sockets.get::<tcp::Socket>(sock).send_capacity() as u64;
            let caps = cap(&hosts[c], active).min(cap(&hosts[s], listen));
            (netpipe::Io::Tcp(active), netpipe::Io::Tcp(listen), caps)
        }
        crate::config::Transport::Udp => {
            let (a, b, peer) = open_udp(hosts, c, s, n.port);
            let cap = |h: &Host, sock| h.sockets.get::<udp_socket::Socket>(sock).payload_send_capacity() as u64;
            let caps = cap(&hosts[c], a).min(cap(&hosts[s], b));
            (netpipe::Io::udp(a, Some(peer)), netpipe::Io::udp(b, None), caps)
        }
    };
    let mut opts = netpipe_options(n);
    if n.bidirectional {
        // NPtcp -2 caps the blocks at the socket buffer size: a block
        // must fit the send buffer while the peer is sending too.
        opts.upper = opts.upper.min(caps);
        opts.bidir = true;
    }
    let (client, server) = netpipe::pair(client_io, server_io, seed, opts);
    apps[c] = App::NpClient(client);
    apps[s] = App::NpServer(server);
}

/// Pattern streams of the request/response connections beside bulk flows:
/// connection `j`'s requests use `RPC_STREAMS + 2j`, its responses the next
/// (bulk flows use the streams from 0).
const RPC_STREAMS: u64 = 1 << 32;

/// Bulk transfers: flow `g` (numbered across all transfers) uses pattern
/// stream `g` and sender port 49152 + `g`; flow `i` of a transfer goes to
/// its `port + i`. A host with several flows runs them as one [`Multi`],
/// with the request/response connections beside them (`rpc`: connection
/// `j` to `rpc_port + j`, numbered after the flows for its sender port).
pub(super) fn install_bulk(list: &[BulkConfig], hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let mut per_host: Vec<Vec<App>> = hosts.iter().map(|_| Vec::new()).collect();
    let mut g: u32 = 0;
    for b in list {
        let BulkConfig { from, to, bytes, duration, omit, write_size, port, flows, disk_rate, .. } = b;
        let (tx, rx) = (host_index(hosts, from), host_index(hosts, to));
        for i in 0..*flows {
            let (port, local) = (port + i as u16, EPHEMERAL_PORT.wrapping_add(g as u16));
            let (active, listen) = open_from(hosts, tx, rx, port, local);
            per_host[tx].push(App::BulkTx(BulkSender {
                flow: g,
                sock: active,
                pattern: Pattern::new(seed, u64::from(g)),
                total: bytes.map(|b| b.0),
                // The flow sends through the warm-up and then for `duration`.
                duration: duration.map(|d| d.dur() + omit.map_or(crate::engine::Dur::ZERO, |o| o.dur())),
                chunk: write_size.0,
                sent: 0,
                closed: false,
                waiting: false,
                started: None,
            }));
            per_host[rx].push(App::BulkRx(BulkReceiver {
                flow: g,
                from: tx,
                sock: listen,
                check: Checker::new(seed, u64::from(g)),
                total: bytes.map(|b| b.0),
                chunk: write_size.0,
                last_byte: None,
                measured: None,
                done: false,
                disk: *disk_rate,
                disk_busy_until: None,
            }));
            g += 1;
        }
        if let (Some(r), Some(first)) = (&b.rpc, b.rpc_port()) {
            // As long as the flows: through the warm-up and then for `duration` (validated).
            let until = duration.map(|d| Time::ZERO + d.dur() + omit.map_or(crate::engine::Dur::ZERO, |o| o.dur()));
            for j in 0..r.connections {
                let socks = open_from(hosts, tx, rx, (first + j) as u16, EPHEMERAL_PORT.wrapping_add(g as u16));
                g += 1;
                let spec = RrSpec {
                    request: r.request.0,
                    response: r.response.0,
                    transactions: u64::MAX,
                    until,
                    think: crate::engine::Dur::ZERO,
                    streams: (RPC_STREAMS + 2 * u64::from(j), RPC_STREAMS + 2 * u64::from(j) + 1),
                };
                let (client, server) = rr_pair(seed, socks, &spec, Some(tx));
                per_host[tx].push(client);
                per_host[rx].push(server);
            }
        }
    }
    for (app, mut mine) in apps.iter_mut().zip(per_host) {
        *app = match mine.len() {
            0 => App::Idle,
            1 => mine.pop().expect("one"),
            _ => App::Multi(Multi::new(mine)),
        };
    }
}

/// Dolly's chain: link `i` joins node `i` (active open from port 49152 +
/// `i`) to node `i + 1` (listening on `port`); all carry the image, pattern
/// stream 0.
pub(super) fn install_dolly(d: &crate::config::DollyConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let nodes: Vec<usize> = d.nodes.iter().map(|n| host_index(hosts, n)).collect();
    let socks: Vec<(SocketHandle, SocketHandle)> = (nodes.windows(2).enumerate())
        .map(|(i, w)| open_from(hosts, w[0], w[1], d.port, EPHEMERAL_PORT.wrapping_add(i as u16)))
        .collect();
    let last = nodes.len() - 1;
    apps[nodes[0]] = App::BulkTx(BulkSender {
        flow: 0,
        sock: socks[0].0,
        pattern: Pattern::new(seed, 0),
        total: Some(d.bytes.0),
        duration: None,
        chunk: d.write_size.0,
        sent: 0,
        closed: false,
        waiting: false,
        started: None,
    });
    for i in 1..last {
        let (up, down) = (socks[i - 1].1, socks[i].0);
        apps[nodes[i]] =
            App::Relay(dolly::Relay::new(nodes[i - 1], (up, down), seed, d.bytes.0, d.write_size.0, d.disk_rate));
    }
    apps[nodes[last]] = App::BulkRx(BulkReceiver {
        flow: 0,
        from: nodes[last - 1],
        sock: socks[last - 1].1,
        check: Checker::new(seed, 0),
        total: Some(d.bytes.0),
        chunk: d.write_size.0,
        last_byte: None,
        measured: None,
        done: false,
        disk: d.disk_rate,
        disk_busy_until: None,
    });
}

/// A DSM: node `i` faults `pages` times on `home` over its own connection
/// (home's port `port + i`, pattern streams 2i for requests and 2i + 1 for
/// pages); home serves all connections as one program.
pub(super) fn install_dsm(d: &crate::config::DsmConfig, hosts: &mut [Host], apps: &mut [App], seed: u64) {
    let home = host_index(hosts, &d.home);
    // A run of fixed duration: faults until the warm-up and the duration
    // have passed (the transaction count is then what was done by then).
    let until = d.duration.map(|t| Time::ZERO + t.dur() + d.omit.map_or(crate::engine::Dur::ZERO, |o| o.dur()));
    let pages = if until.is_some() { u64::MAX } else { d.pages.unwrap_or(DEFAULT_PAGES) };
    let mut served = Vec::new();
    for (i, name) in d.nodes.iter().enumerate() {
        let node = host_index(hosts, name);
        let socks = open_from(hosts, node, home, d.port + i as u16, EPHEMERAL_PORT.wrapping_add(i as u16));
        let spec = RrSpec {
            request: d.request.0,
            response: d.page_size.0,
            transactions: pages,
            until,
            think: d.think.dur(),
            streams: (2 * i as u64, 2 * i as u64 + 1),
        };
        let (client, server) = rr_pair(seed, socks, &spec, Some(node));
        apps[node] = client;
        served.push(server);
    }
    apps[home] = match served.len() {
        1 => served.pop().expect("one"),
        _ => App::Multi(Multi::new(served)),
    };
}

/// NetPIPE's constants for a configuration.
fn netpipe_options(n: &NetpipeConfig) -> netpipe::Options {
    let (run_time, trials) = if n.r#final { (250_000_000_000, 7) } else { (100_000_000_000, 3) };
    netpipe::Options {
        start: n.lower.0,
        upper: n.upper.map_or(u64::MAX, |u| u.0),
        perturbation: n.perturbation,
        stream: n.stream,
        bidir: false,
        run_time: n.run_time.map_or(crate::engine::Dur(run_time), |t| t.dur()),
        trials,
        stop_time: n.stop_time.dur(),
    }
}
