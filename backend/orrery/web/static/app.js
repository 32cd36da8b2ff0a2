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

  async run(content, key, url) {
    this.url = url ?? `/s/${this.sessionId}/turn`;
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
    const follow = follow_ok();
    this.messages.append(this.draft);
    if (follow) toEnd();
    try {
      const response = await fetch(this.url, {
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
    else if (type === "text") {
      const follow = follow_ok();
      this.text.textContent += data.delta;
      follow ? toEnd() : showPill();
    }
    else if (type === "tool_call") this.toolCall(data);
    else if (type === "tool_result") this.toolResult(data);
    else if (type === "error") this.fail(`The model failed: ${data.message}`, data.retry !== false);
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
    const follow = follow_ok();
    const response = await fetch(`/s/${this.sessionId}/m/${data.seq}?prompt=true`);
    if (response.ok) {
      const template = document.createElement("template");
      template.innerHTML = await response.text(); // server-rendered and escaped
      if (this.mine && template.content.querySelector(".msg-user")) this.mine.remove();
      this.draft.replaceWith(template.content);
      window.htmx?.process(this.messages);
      enhance(this.messages);
      follow ? toEnd() : showPill();
    } else {
      this.draft.classList.remove("streaming");
    }
    refreshInspector();
  }

  fail(message, retryable = true) {
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
      const again = new Turn(this.form);
      again.mine = this.mine;
      again.run(this.content, this.key, this.url); // same Idempotency-Key: never answered twice
    });
    if (retryable) box.append(retry); // a refused key fails the same way until the setting changes
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
    toEnd(); // sending is a wish to follow the reply
    const turn = new Turn(composer);
    turn.mine = mine;
    turn.run(content, newKey());
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
}

// --- Following the conversation: autoscroll unless the reader scrolled up, then a "new reply" pill.
const messagesBox = document.getElementById("messages");
const pill = document.getElementById("new-reply");

function pageScrolls() {
  // the messages box scrolls on a wide screen; on narrower ones the page does
  return !messagesBox || messagesBox.scrollHeight <= messagesBox.clientHeight + 1
    || getComputedStyle(messagesBox).overflowY === "visible";
}

function follow_ok() {
  if (!messagesBox) return true;
  if (pageScrolls()) {
    const root = document.scrollingElement;
    return root.scrollHeight - root.scrollTop - window.innerHeight < 120;
  }
  return messagesBox.scrollHeight - messagesBox.scrollTop - messagesBox.clientHeight < 120;
}

function toEnd() {
  if (!messagesBox) return;
  messagesBox.scrollTop = messagesBox.scrollHeight;
  const root = document.scrollingElement;
  if (pageScrolls()) root.scrollTop = root.scrollHeight; // the composer sits below the last message
  if (pill) pill.hidden = true;
}

function showPill() {
  if (pill) pill.hidden = false;
}

pill?.addEventListener("click", () => toEnd());
for (const target of [messagesBox, window]) {
  target?.addEventListener("scroll", () => {
    if (pill && !pill.hidden && follow_ok()) pill.hidden = true;
  }, { passive: true });
}

// --- Copy buttons on code blocks, and edit-and-resend on the last user message.
function enhance(root) {
  for (const pre of root.querySelectorAll(".msg-body pre")) {
    if (pre.querySelector(".copy")) continue;
    const button = el("button", "copy", "Copy");
    button.type = "button";
    button.setAttribute("aria-label", "Copy code");
    button.addEventListener("click", async () => {
      const code = pre.querySelector("code")?.textContent ?? pre.textContent;
      try {
        await navigator.clipboard.writeText(code);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Select and copy";
      }
    });
    pre.prepend(button);
  }
  markEditable();
}

function markEditable() {
  for (const old of document.querySelectorAll(".msg-tools.edit")) old.remove();
  const users = document.querySelectorAll("#messages .msg-user[data-seq]");
  const last = users[users.length - 1];
  if (!last || !composer || last.querySelector(".edit-box")) return;
  const tools = el("div", "msg-tools edit");
  const button = el("button", "link", "Edit");
  button.type = "button";
  button.setAttribute("aria-label", `Edit message ${last.dataset.seq}`);
  button.title = "Edit and resend";
  button.addEventListener("click", () => startEdit(last));
  tools.append(button);
  last.append(tools);
}

function startEdit(article) {
  const body = article.querySelector(".msg-body");
  const original = body.textContent.trim();
  const form = el("form", "edit-box");
  const label = el("label", "sr-only", "Edited message");
  const area = el("textarea");
  area.id = `edit-${article.dataset.seq}`;
  label.htmlFor = area.id;
  area.value = original;
  area.rows = 3;
  area.maxLength = 20000;
  const send = el("button", "", "Send edit");
  send.type = "submit";
  const cancel = el("button", "link", "Cancel");
  cancel.type = "button";
  form.append(label, area, send, cancel);
  body.hidden = true;
  article.querySelector(".msg-tools.edit")?.remove();
  article.append(form);
  area.focus();
  cancel.addEventListener("click", () => {
    form.remove();
    body.hidden = false;
    markEditable();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = area.value.trim();
    if (!content) return;
    const seq = article.dataset.seq;
    // the old message and its reply stay stored (superseded); the page shows the new exchange
    let next = article.nextElementSibling;
    while (next) {
      const after = next.nextElementSibling;
      next.remove();
      next = after;
    }
    form.remove();
    body.replaceChildren(el("p", "plain", content));
    body.hidden = false;
    delete article.dataset.seq;
    article.removeAttribute("id");
    toEnd();
    const turn = new Turn(composer);
    turn.mine = article;
    turn.run(content, newKey(), `/s/${composer.dataset.session}/m/${seq}/edit`);
  });
}

document.body.addEventListener("htmx:afterSwap", (event) => {
  if (event.target.closest?.("#messages")) enhance(messagesBox);
});

// --- Phones: the inspector is a tab next to the chat, not the page's tail.
const app = document.querySelector(".app");
const inspectorPane = document.querySelector(".inspector");
inspectorPane?.classList.add("tabbed");
for (const tab of document.querySelectorAll(".phone-tabs .tab")) {
  tab.addEventListener("click", () => {
    const inspector = tab.dataset.pane === "inspector";
    app.classList.toggle("pane-inspector", inspector);
    for (const other of document.querySelectorAll(".phone-tabs .tab")) {
      other.setAttribute("aria-pressed", String(other === tab));
    }
    window.scrollTo(0, 0);
  });
}

// --- The focus graph: a node is a button (click, Enter or Space) that refocuses the chat.
function refocus(node) {
  const form = node.closest(".focus-graph")?.querySelector("form.refocus");
  if (!form) return;
  form.elements.kind.value = node.dataset.kind;
  form.elements.entity_id.value = node.dataset.id;
  form.submit();
}
document.addEventListener("click", (event) => {
  const node = event.target.closest?.(".focus-graph .node[data-id]");
  if (node) refocus(node);
});
document.addEventListener("keydown", (event) => {
  const node = event.target.closest?.(".focus-graph .node[data-id]");
  if (node && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    refocus(node);
  }
});

if (messagesBox) {
  enhance(messagesBox);
  toEnd();
}
