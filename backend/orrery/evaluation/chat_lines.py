"""What the generated conversations are made of: personas' slot values and everyday chat lines.

Everyday lines mention the same people, pet and projects as the planted facts, so a question's
words also hit many turns that do not answer it, as in real conversations.
"""

from __future__ import annotations

USER_NAMES = ["Maya", "Jonas", "Priti", "Tom", "Alba", "Kenji", "Rosa", "Idris"]
FRIENDS = ["Tomás", "Freya", "Oluwaseun", "Marta", "Dev", "Ines", "Callum", "Yusuf"]
MANAGERS = ["Harriet", "Naomi", "Beatriz", "Ingrid", "Leila", "Sunita"]
SIBLINGS = ["Lena", "Clara", "Aisha", "Hannah", "Zoe", "Mira"]
SIBLING_RELATIONS = ["sister", "older sister", "little sister"]
SIBLING_JOBS = ["midwife", "paramedic", "ICU nurse", "junior doctor"]
SIBLING_CITIES = ["Leeds", "Rotterdam", "Cork", "Bristol", "Gdańsk", "Porto"]
MOVE_CITIES = ["Lyon", "Montréal", "Tallinn", "Valencia", "Edinburgh", "Copenhagen", "Bilbao"]
PETS = [
    ("dog", "a scruffy terrier mix", "Pepper", "terrier"),
    ("dog", "a retired greyhound", "Biscuit", "greyhound"),
    ("dog", "a beagle with one floppy ear", "Juniper", "beagle"),
    ("cat", "a grey tabby", "Mochi", "tabby"),
    ("cat", "a ginger tom who only has one eye", "Admiral", "ginger"),
]
OTHER_PET = {"dog": "cat", "cat": "dog"}
RACES = ["Harbour Half", "Riverside Half Marathon", "Autumn Ridge Half", "City Lights Half"]
TIMES = [("2:10", "1:58"), ("2:05", "1:55"), ("2:15", "2:02"), ("1:59", "1:49")]
JOBS = [
    ("data analyst", "Brightwell Insurance", "analytics lead", "Fenwick Labs"),
    ("product designer", "Okapi Travel", "design manager", "Lumen Health"),
    ("backend developer", "Quayside Logistics", "staff engineer", "Northstar Energy"),
    ("account manager", "Hollis & Ward", "partnerships director", "Greenleaf Foods"),
]
BOOKS = ["Thinking in Systems", "The Culture Map", "Four Thousand Weeks", "Radical Candor", "Deep Work"]
TEAMS = ["payments", "growth", "platform", "mobile"]
ALLERGIES = [
    ("sesame", "hummus"),
    ("shellfish", "prawn curry"),
    ("hazelnuts", "praline"),
    ("kiwi", "fruit salad"),
]
TRIPS = ["Japan", "Patagonia", "Norway", "Vietnam"]
SAVINGS = [("£250", "£400"), ("€300", "€450"), ("$200", "$350"), ("£150", "£275")]
PROCEDURES = ["wisdom tooth extraction", "knee MRI", "eye laser surgery", "mole removal"]
DRINKS = ["rooibos", "decaf oat flat whites", "fresh mint tea", "chicory coffee"]
BIKES = [("Dawes road bike", "£180"), ("Brompton folder", "£420"), ("steel Peugeot tourer", "€150")]
AREAS = ["Walthamstow", "the north end of town", "a village near the ring road", "Kelvinside"]
PROJECTS = ["Q3 pricing review", "onboarding revamp", "vendor migration", "annual budget deck"]

USER_SMALL_TALK = [
    "Morning! Slept badly again, I kept waking up around four.",
    "Quick check-in before work, I only have ten minutes.",
    "It's been a long week and it's only Wednesday.",
    "Rainy day here, which is honestly fine, I needed an excuse to stay in.",
    "I'm back. Sorry for vanishing, things got hectic.",
    "Evening. Finally sat down after the school run and dinner.",
    "Not much to report today, but I wanted to keep the streak going.",
    "Weekend went way too fast, as usual.",
]
USER_LINES = [
    "{pet} stole a sock off the radiator and ran laps around the kitchen with it.",
    "Took {pet} to the park before breakfast, it was freezing but nice and quiet.",
    "{pet} has decided the sofa is hers now. I've lost that battle.",
    "The vet says {pet} needs to lose a little weight, so fewer treats from the kids.",
    "{friend} and I did a slow 8k along the canal, chatting the whole way.",
    "{friend} sent me a podcast about marathon fuelling, I listened on the bus.",
    "Had a quick lunch with {friend}, we mostly complained about our landlords.",
    "{manager} moved our one-to-one to Thursday afternoons, which suits me better.",
    "{manager} asked me to present the {project} numbers to the leadership group.",
    "Meeting with {manager} ran over again, we went through every slide twice.",
    "The {project} is eating my week, I keep finding gaps in the spreadsheet.",
    "Got good feedback on the {project} draft, small changes only.",
    "Spoke to {sibling} on the phone for an hour, she sounds exhausted after her shifts.",
    "{sibling} sent photos from {sibling_city}, the river looked amazing in the snow.",
    "I skipped my run this morning, my calves were still tight from Sunday.",
    "Did intervals on the track: six by 800 metres, the last two were ugly.",
    "Long run done, 16k, legs heavy but I didn't stop once.",
    "My running watch died halfway through, so no idea about pace today.",
    "Tried batch cooking on Sunday — lentil soup for four days, we'll see if I get bored.",
    "Money's a bit tight this month, the boiler repair wiped out my buffer.",
    "I went to bed at half ten three nights in a row. Small win.",
    "Screen time was awful this week, almost five hours a day.",
    "I finally cleared my inbox to zero, first time since January.",
    "Felt anxious before the team meeting, but it went better than I expected.",
    "My neighbour's renovation starts at 8 every morning, it's driving me mad.",
    "I booked a dentist check-up, only two years late.",
    "Read forty pages last night instead of scrolling, I'm counting that.",
    "The kids have a cold so the house is chaos and nobody is sleeping.",
    "Planning meals for the week, trying to cook at least four nights.",
    "I said no to an extra project today, which felt scary but right.",
    "Stretched for ten minutes after work like we discussed, my back thanks me.",
    "Work was fine, nothing exciting. I'm mostly looking forward to the weekend.",
    "I've been journaling in the mornings, just three lines, but it helps.",
    "Tried the new climbing gym with a colleague, my forearms are destroyed.",
    "We watched a documentary about octopuses and now I can't stop talking about them.",
    "The train was cancelled so I worked from the café by the station.",
]
ASSISTANT_LINES = [
    "That sounds like a lot to juggle. What would make tomorrow a little easier?",
    "Nice work keeping the streak going. How are you feeling about the rest of the week?",
    "Good to hear from you. What's the one thing you want to get done today?",
    "That's a real win, even if it feels small. What helped you pull it off?",
    "Sorry it's been rough. Is there anything you can take off your plate this week?",
    "Thanks for the update. Shall we look at your plan for the next few days?",
    "Sounds like your body is asking for rest. Would an easy day tomorrow fit?",
    "How did that feel compared with last time?",
    "Interesting! What did you learn from it that you want to keep doing?",
    "That's a sensible call. What would you like to do with the time it frees up?",
    "Let's keep it simple: what's the smallest next step?",
    "It makes sense that you're tired. When did you last have a proper day off?",
    "I hear you. Do you want to talk it through or just vent for a minute?",
    "Good plan. I'll check in on how it went next time.",
    "Noted. Anything else on your mind before you head off?",
    "That's progress. Be proud of that one.",
]
USER_CLOSINGS = [
    "Anyway, I should go. Talk soon.",
    "Thanks, that helped. Off to make dinner.",
    "Okay, signing off for today.",
    "Right, back to it. Speak tomorrow maybe.",
]
ASSISTANT_CLOSINGS = [
    "Take care, and good luck with the rest of the day.",
    "Talk soon. Go easy on yourself.",
    "Enjoy your evening!",
    "See you next time.",
]
