// Orrery web app: the streamed chat turn (fetch + Server-Sent Events), stop/retry, and small
// conveniences. Everything else is server-rendered HTML with htmx. Text from the model is only
// ever inserted with textContent; the finished message is replaced by the server's safe rendering.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? "";

function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// On a phone the sessions list starts folded, so the chat is on the first screen.
if (window.matchMedia("(max-width: 700px)").matches) {
  document.querySelector(".sessions-box")?.removeAttribute("open");
}

// Ask before destructive forms (data-confirm="question").
document.addEventListener("submit", (event) => {
  const question = event.target.dataset?.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

function* parseEvents(buffer) {
  // Yields [type, data] for each complete SSE block; the caller keeps the unfinished tail.
  for (const block of buffer) {
    let type = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) type = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (data) yield [type, JSON.parse(data)];
  }
}

class Turn {
  constructor(form) {
    this.form = form;
    this.sessionId = form.dataset.session;
    this.messages = document.getElementById("messages");
    this.status = document.getElementById("turn-status");
    this.send = document.getElementById("send");
    this.stop = document.getElementById("stop");
    this.cards = new Map();
  }

  async run(content, key) {
    this.content = content;
    this.key = key;
    this.controller = new AbortController();
    this.setBusy(true);
    this.draft = el("article", "msg msg-assistant streaming");
    const head = el("header", "msg-head");
    this.agentLabel = el("span", "agent", "…");
    head.append(this.agentLabel);
    this.toolBox = el("div", "tools");
    this.body = el("div", "msg-body");
    this.text = el("p", "plain");
    this.body.append(this.text);
    this.draft.append(head, this.toolBox, this.body);
    this.messages.append(this.draft);
    this.draft.scrollIntoView({ block: "end" });
    try {
      const response = await fetch(`/s/${this.sessionId}/turn`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "text/event-stream",
          "X-CSRF-Token": csrf,
          "Idempotency-Key": key,
        },
        body: JSON.stringify({ content }),
        signal: this.controller.signal,
      });
      if (!response.ok) {
        const detail = await response.text();
        throw new Error(detail.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim().slice(0, 300));
      }
      await this.read(response.body.getReader());
    } catch (error) {
      const stopped = error.name === "AbortError";
      this.fail(stopped ? "Stopped." : `The turn failed: ${error.message}`);
    } finally {
      this.setBusy(false);
    }
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let tail = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      tail += decoder.decode(value, { stream: true });
      const blocks = tail.split("\n\n");
      tail = blocks.pop();
      for (const [type, data] of parseEvents(blocks)) await this.on(type, data);
    }
    if (!this.finished) this.fail("The connection closed before the reply was complete.");
  }

  async on(type, data) {
    if (type === "agent") this.agentLabel.textContent = (data.agent ?? "assistant").replaceAll("_", " ");
    else if (type === "context") this.status.textContent = `Context: ${data.receipt_tokens} tokens`;
    else if (type === "text") this.text.textContent += data.delta;
    else if (type === "tool_call") this.toolCall(data);
    else if (type === "tool_result") this.toolResult(data);
    else if (type === "error") this.fail(`The model failed: ${data.message}`);
    else if (type === "done") await this.done(data);
  }

  toolCall(data) {
    const card = el("details", "tool");
    const summary = el("summary");
    summary.append(el("span", "tool-label", "tool"), " ", el("code", "", data.name));
    card.append(summary, el("h4", "", "Arguments"), el("pre", "", JSON.stringify(data.args, null, 2)));
    this.toolBox.append(card);
    this.cards.set(data.id, card);
  }

  toolResult(data) {
    const card = this.cards.get(data.id);
    if (!card) return;
    if (data.error) card.classList.add("tool-error");
    card.append(el("h4", "", data.error ? "Error" : "Result"), el("pre", "", data.content));
  }

  async done(data) {
    this.finished = true;
    this.status.textContent = data.handoff ? `Handed off to ${data.handoff.replaceAll("_", " ")}.` : "";
    const response = await fetch(`/s/${this.sessionId}/m/${data.seq}`);
    if (response.ok) {
      const template = document.createElement("template");
      template.innerHTML = await response.text(); // server-rendered and escaped
      this.draft.replaceWith(template.content);
      window.htmx?.process(this.messages);
    } else {
      this.draft.classList.remove("streaming");
    }
    refreshInspector();
  }

  fail(message) {
    if (this.finished) return;
    this.finished = true;
    this.draft.classList.remove("streaming");
    this.draft.classList.add("failed");
    const box = el("p", "error", message + " ");
    box.setAttribute("role", "alert");
    const retry = el("button", "retry", "Retry");
    retry.type = "button";
    retry.addEventListener("click", () => {
      this.draft.remove();
      new Turn(this.form).run(this.content, this.key); // same Idempotency-Key: never answered twice
    });
    box.append(retry);
    this.draft.append(box);
    this.status.textContent = "";
  }

  setBusy(busy) {
    this.send.disabled = busy;
    this.stop.hidden = !busy;
    this.stop.onclick = busy ? () => this.controller.abort() : null;
  }
}

function refreshInspector() {
  const details = document.getElementById("inspector");
  const body = document.getElementById("inspector-body");
  if (details?.open && window.htmx) window.htmx.ajax("GET", body.dataset.url, { target: body });
}

const composer = document.getElementById("composer");
if (composer) {
  const input = composer.querySelector("textarea");
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    input.value = "";
    const mine = el("article", "msg msg-user");
    const head = el("header", "msg-head");
    head.append(el("span", "agent", "user"));
    const body = el("div", "msg-body");
    body.append(el("p", "plain", content));
    mine.append(head, body);
    document.getElementById("messages").append(mine);
    new Turn(composer).run(content, newKey());
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  document.getElementById("messages").lastElementChild?.scrollIntoView({ block: "end" });
}
