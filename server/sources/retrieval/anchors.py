"""Parallel English / Chinese sentences that estimate the language component of a vector space.

Each pair says the same thing in both languages, so the difference between the two mean vectors is
the language itself, not a topic. They are deliberately generic (everyday life and generic
engineering chores) and name no fault that a runbook would describe: they must not pull any topic
toward or away from a query.
"""

from __future__ import annotations

PAIRS: tuple[tuple[str, str], ...] = (
    ("The team meets every Monday morning to plan the week.", "团队每周一早上开会安排本周的工作。"),
    ("Please send me the document before noon.", "请在中午之前把文件发给我。"),
    ("She has worked at this company for five years.", "她在这家公司工作了五年。"),
    ("The new office is close to the subway station.", "新办公室离地铁站很近。"),
    ("We finished the project ahead of schedule.", "我们提前完成了这个项目。"),
    ("He forgot his password and asked for help.", "他忘记了密码，于是请求帮助。"),
    ("The report shows the results of the last quarter.", "这份报告展示了上个季度的结果。"),
    ("I will be on holiday next week.", "我下周休假。"),
    ("Write down the steps so that others can repeat them.", "把步骤写下来，方便别人照着做。"),
    ("The price of the product went up this year.", "这个产品今年涨价了。"),
    ("Children are playing in the park after school.", "孩子们放学后在公园里玩耍。"),
    ("My phone battery runs out very quickly.", "我的手机电池很快就没电了。"),
    ("The library opens at nine and closes at six.", "图书馆九点开门，六点关门。"),
    ("They moved to a bigger apartment last month.", "他们上个月搬进了更大的公寓。"),
    ("The train was delayed by half an hour.", "火车晚点了半个小时。"),
    ("Can you explain this part again?", "你能再解释一下这部分吗？"),
    ("The manager approved the budget for the new year.", "经理批准了新一年的预算。"),
    ("We need more people to finish this task.", "我们需要更多的人来完成这项任务。"),
    ("The customer asked for a refund.", "客户要求退款。"),
    ("The instructions are printed on the back of the box.", "说明印在盒子的背面。"),
    ("Our team released a new version of the app.", "我们团队发布了应用的新版本。"),
    ("The engineer reviewed the code before lunch.", "工程师在午饭前审查了代码。"),
    ("Update the documentation after every change.", "每次修改后都要更新文档。"),
    ("The test passed on the second attempt.", "测试在第二次尝试时通过了。"),
    ("Add a comment that explains the reason.", "加一条注释说明原因。"),
    ("The user clicked the button twice.", "用户点击了两次按钮。"),
    ("We store the files in a shared folder.", "我们把文件存放在共享文件夹里。"),
    ("The script runs once a day.", "这个脚本每天运行一次。"),
    ("The form asks for a name and an email address.", "这个表单要求填写姓名和电子邮件地址。"),
    ("The design was changed after the review.", "评审之后设计被修改了。"),
    ("Ask the owner of the project for permission.", "向项目负责人申请权限。"),
    ("The screen shows a list of recent orders.", "屏幕上显示最近订单的列表。"),
    ("The meeting room on the third floor is free.", "三楼的会议室现在空着。"),
    ("He prefers tea to coffee in the afternoon.", "他下午更喜欢喝茶而不是咖啡。"),
    ("The museum has a new exhibition about ancient art.", "博物馆有一个关于古代艺术的新展览。"),
    ("She is learning to play the piano.", "她正在学习弹钢琴。"),
    ("The shop is closed on public holidays.", "这家商店在法定节假日不营业。"),
    ("We translated the guide into three languages.", "我们把指南翻译成了三种语言。"),
    ("The package will arrive on Thursday.", "包裹将在星期四送到。"),
    ("Keep a copy of the contract for your records.", "请保留一份合同副本备查。"),
)
